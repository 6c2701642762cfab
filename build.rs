//! With the `torch` feature: compiles `csrc/conv_backward.cpp` (LibTorch's fused
//! convolution backward, which tch does not expose) against the libtorch torch-sys found,
//! with the same C++ ABI. Without it, nothing.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "torch")]
    torch::compile();
}

#[cfg(feature = "torch")]
mod torch {
    use std::path::PathBuf;

    pub fn compile() {
        println!("cargo:rerun-if-changed=csrc/conv_backward.cpp");
        println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
        // torch-sys (`links = "tch"`) passes the lib folder it linked; the headers are
        // beside it, in a wheel (torch/lib, torch/include) and in a libtorch archive alike.
        let lib = PathBuf::from(
            std::env::var("DEP_TCH_LIBTORCH_LIB").expect("torch-sys gives DEP_TCH_LIBTORCH_LIB"),
        );
        let include = lib
            .parent()
            .expect("libtorch's lib folder has a parent")
            .join("include");
        // Wheels since torch 2.7 and libtorch archives use the new ABI; torch-sys takes the
        // same default and the same override.
        let abi = std::env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".into());
        cc::Build::new()
            .cpp(true)
            .pic(true)
            .warnings(false)
            .include(&include)
            .include(include.join("torch/csrc/api/include"))
            .flag("-std=c++17")
            .flag(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
            .file("csrc/conv_backward.cpp")
            .compile("ant_conv_backward");
    }
}
