//! Builds the test drivers as components: the deliberately broken ones and
//! one of each frozen contract before the newest (0.1.0, 0.2.0).

fn main() {
    let built = wasm_build::build(
        &[
            "cinch-test-driver-faulty",
            "cinch-test-driver-future",
            "cinch-test-driver-legacy",
            "cinch-test-driver-conversant",
        ],
        &["sdk", "wit", "tests/drivers"],
    );
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let consts: String = built
        .iter()
        .map(|component| {
            let name = component
                .package
                .trim_start_matches("cinch-test-driver-")
                .to_uppercase();
            format!(
                "/// The `{}` component.\npub const {name}_WASM: &str = {:?};\n",
                component.package, component.path
            )
        })
        .collect();
    std::fs::write(out.join("test_drivers.rs"), consts).expect("writing test_drivers.rs");
}
