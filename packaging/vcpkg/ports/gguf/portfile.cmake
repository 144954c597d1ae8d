# An overlay port built from this checkout: vcpkg install gguf --overlay-ports=<repo>/packaging/vcpkg/ports
# (A registry port would fetch a release instead, with vcpkg_from_github(OUT_SOURCE_PATH SOURCE_PATH ...).)
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)

set(VCPKG_BUILD_TYPE release)  # header-only: one configuration is all there is

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        -DGGUF_BUILD_TESTS=OFF
        -DGGUF_BUILD_EXAMPLES=OFF
        -DGGUF_BUILD_BENCHMARKS=OFF
        -DGGUF_BUILD_FUZZERS=OFF
        -DGGUF_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME gguf CONFIG_PATH share/cmake/gguf)
vcpkg_fixup_pkgconfig()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
