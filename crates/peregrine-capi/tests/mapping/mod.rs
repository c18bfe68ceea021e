mod differential;
mod ffi;
mod rules;
mod util;
