//! A driver for a contract version (9.0.0) that no host links.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({ world: "harness-driver", path: "wit" });

    struct Future;

    impl exports::cinch::driver::driver::Guest for Future {
        fn describe() -> String {
            "from the future".into()
        }
    }

    export!(Future);
}
