//! Tests of the node state machine.

mod kraft_upgrade;
mod sim;
