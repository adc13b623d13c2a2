# `cmake --install BUILD --prefix P`: the kiln CLI and kiln-run-artifact in P/bin, the layer
# libraries in P/lib, the headers in P/include (the generated kernels include the runtime's
# kernel ABI from there too) and a CMake package in P/lib/cmake/kiln. The runtime has an export
# set of its own, so a program that only runs artifacts needs neither ONNX nor protobuf.
include(CMakePackageConfigHelpers)

set(kiln_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

install(TARGETS kiln kiln-run-artifact RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(TARGETS kiln_support kiln_runtime EXPORT kilnRuntimeTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT kilnRuntimeTargets NAMESPACE kiln:: DESTINATION ${kiln_cmake_dir})

install(TARGETS kiln_ir kiln_tir kiln_te kiln_codegen kiln_op kiln_interp kiln_transform kiln_frontend kiln_backend
                kiln_tpulang kiln_compiler
        EXPORT kilnCompilerTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT kilnCompilerTargets NAMESPACE kiln:: DESTINATION ${kiln_cmake_dir})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${kiln_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${kiln_cmake_dir})
