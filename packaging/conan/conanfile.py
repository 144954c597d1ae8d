# Conan 2 recipe for gguf, a header-only library. From the repository root:
#   conan create packaging/conan
# builds the package from this checkout and runs test_package/.
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy
from conan.tools.layout import basic_layout


class GgufConan(ConanFile):
    name = "gguf"
    version = "0.2.0"
    description = "Header-only C++20 library for GGUF model files (llama.cpp / ggml): read, write, split, dequantize, quantize"
    license = "MIT"
    topics = ("gguf", "ggml", "llama.cpp", "quantization", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True

    def export_sources(self):
        root = os.path.join(self.recipe_folder, "..", "..")
        copy(self, "include/*", root, self.export_sources_folder)
        copy(self, "LICENSE", root, self.export_sources_folder)

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        self.requires("xsimd/[>=8.1 <14]")  # the versions the kernels are written for

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "gguf")
        self.cpp_info.set_property("cmake_target_name", "gguf::gguf")
        self.cpp_info.set_property("pkg_config_name", "gguf")
        if self.settings.os in ("Linux", "FreeBSD"):
            self.cpp_info.system_libs = ["pthread"]
