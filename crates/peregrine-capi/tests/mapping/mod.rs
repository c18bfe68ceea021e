mod differential;
mod ffi;
mod no_alloc;
mod rules;
mod util;
