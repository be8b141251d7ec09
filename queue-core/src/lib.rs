//! An acknowledgement-counting work queue with an outcome ledger.
#![no_std]
