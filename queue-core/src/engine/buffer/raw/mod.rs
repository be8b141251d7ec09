//! The buffers whose slots are raw memory, and the crate's one module with `unsafe` code
//! (`lib.rs` denies it everywhere else): the ring of `ring.rs` (with its batch claims in
//! `ring/batch.rs`) and the unbounded block list of `list.rs`. A slot's value is a
//! `MaybeUninit` that only the thread that claimed the slot touches; a list block is a raw
//! pointer freed by exactly one get. Each file says why its `unsafe` blocks are sound, one
//! `// SAFETY:` comment per block.

pub(crate) mod list;
pub(crate) mod ring;
