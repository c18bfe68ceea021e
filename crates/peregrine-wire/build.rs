//! Generates the codec from the protocol schema (`schema/protocol.xml`): the message
//! structs (through `wire_message!`), the channel decoders (`wire_family!`) and the
//! reason-code enums, into `OUT_DIR`, where the modules `include!` them. A schema that
//! breaks a rule (`schema/model.rs`, `check`) fails the build with every problem
//! listed.

#[path = "schema/model.rs"]
#[allow(dead_code)] // shared with the tests, which use the parts the generator does not
mod model;
#[path = "schema/rust.rs"]
mod rust;

fn main() {
    println!("cargo:rerun-if-changed=schema/protocol.xml");
    println!("cargo:rerun-if-changed=schema/model.rs");
    println!("cargo:rerun-if-changed=schema/rust.rs");
    let text = std::fs::read_to_string("schema/protocol.xml").expect("read schema/protocol.xml");
    let schema = match model::parse(&text) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set"));
    for (name, contents) in rust::generate(&schema) {
        let path = out.join(name);
        // Rewrite only on change, so nothing downstream rebuilds for nothing.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
            std::fs::write(&path, contents).expect("write generated code");
        }
    }
}
