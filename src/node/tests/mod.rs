//! Tests of the node state machine.

mod catch_up;
mod kraft_upgrade;
mod sim;
