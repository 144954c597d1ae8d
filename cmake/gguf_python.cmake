# pygguf's build requirements: a Python interpreter that imports numpy and pybind11, its development
# files, and pybind11's CMake package.
#
# A machine may have several interpreters (pyenv's first on PATH, Debian's in /usr/bin); the first one
# that imports both numpy and pybind11 is used, unless Python_EXECUTABLE names one.
#
#   gguf_find_python()   sets GGUF_PYTHON_FOUND to TRUE when the module can be built, else to FALSE
#                        with a status message saying what is missing (a macro: the packages it finds
#                        must be seen by the caller)
macro(gguf_find_python)
  set(GGUF_PYTHON_FOUND FALSE)
  if(NOT Python_EXECUTABLE)
    set(_gguf_candidates "")
    foreach(_gguf_name python3 python)
      find_program(_gguf_py_${_gguf_name} NAMES ${_gguf_name} NO_CACHE)
      if(_gguf_py_${_gguf_name})
        list(APPEND _gguf_candidates "${_gguf_py_${_gguf_name}}")
      endif()
    endforeach()
    list(APPEND _gguf_candidates /usr/bin/python3 /usr/local/bin/python3)
    list(REMOVE_DUPLICATES _gguf_candidates)
    foreach(_gguf_candidate IN LISTS _gguf_candidates)
      if(EXISTS "${_gguf_candidate}" AND NOT Python_EXECUTABLE)
        execute_process(COMMAND "${_gguf_candidate}" -c "import numpy, pybind11"
                        RESULT_VARIABLE _gguf_failed OUTPUT_QUIET ERROR_QUIET)
        if(NOT _gguf_failed)
          set(Python_EXECUTABLE "${_gguf_candidate}" CACHE FILEPATH "The Python interpreter pygguf is built for")
        endif()
      endif()
    endforeach()
  endif()
  if(NOT Python_EXECUTABLE)
    message(STATUS "gguf: no Python interpreter imports numpy and pybind11: pygguf is not built "
                   "(Debian: apt install python3-numpy python3-pybind11 python3-dev)")
  else()
    find_package(Python COMPONENTS Interpreter Development.Module QUIET)
    if(NOT Python_Development.Module_FOUND)
      message(STATUS "gguf: no development files for ${Python_EXECUTABLE}: pygguf is not built "
                     "(Debian: apt install python3-dev)")
    else()
      if(NOT pybind11_DIR)
        execute_process(COMMAND "${Python_EXECUTABLE}" -c "import pybind11; print(pybind11.get_cmake_dir())"
                        OUTPUT_VARIABLE _gguf_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        set(pybind11_DIR "${_gguf_dir}" CACHE PATH "pybind11's CMake package")
      endif()
      find_package(pybind11 CONFIG QUIET)
      if(NOT pybind11_FOUND)
        message(STATUS "gguf: pybind11's CMake package not found for ${Python_EXECUTABLE}: pygguf is not built")
      else()
        set(GGUF_PYTHON_FOUND TRUE)
      endif()
    endif()
  endif()
endmacro()
