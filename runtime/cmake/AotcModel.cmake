# aotc_add_model_library(<target> <sources>...)
#
# Builds a model shared object the way the aotc compiler links one: the
# wrapper sources (compiled freestanding against model_desc.h), the runtime
# archive, OpenCL and the C/C++ system libraries, exporting only aotc_*.
# Used for hand-written test models until the compiler exists.
function(aotc_add_model_library target)
  add_library(${target} SHARED ${ARGN})
  target_include_directories(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_definitions(${target} PRIVATE AOTC_FREESTANDING)
  target_compile_options(${target} PRIVATE ${AOTC_WARNINGS})
  # The archive goes in whole-archive so that every aotc_* ABI function is
  # kept even though nothing in the wrapper references it.
  target_link_libraries(${target} PRIVATE
    "-Wl,--whole-archive" aotc_model_runtime "-Wl,--no-whole-archive"
    OpenCL::OpenCL)
  target_link_options(${target} PRIVATE ${AOTC_MODEL_LINK_FLAGS})
  set_target_properties(${target} PROPERTIES
    LINK_DEPENDS ${AOTC_MODEL_VERSION_SCRIPT}
    PREFIX "")
endfunction()
