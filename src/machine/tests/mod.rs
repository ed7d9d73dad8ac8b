//! Tests of the node state machine.

mod sim;
