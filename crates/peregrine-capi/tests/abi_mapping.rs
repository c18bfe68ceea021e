//! The challenge's rules as the C ABI maps them onto Peregrine's book: one test per
//! rule with the expected reports spelled out, a differential test against both a
//! model written from the challenge's header and the reference book, and the
//! exported symbols driven through a C-style transport.

mod mapping;

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;
