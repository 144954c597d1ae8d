# Checks gguf-dump's command-line contract. Run by ctest: cmake -DDUMP=... -DDATA=... -DWORK=... -P cli_test.cmake
file(MAKE_DIRECTORY "${WORK}")

function(expect_exit code)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "${ARGN}: exit ${rc}, expected ${code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_error_line)
  if(NOT err MATCHES "^error: [^\n]*\n$")
    message(FATAL_ERROR "expected one line starting with 'error:' on stderr, got: '${err}'")
  endif()
endfunction()

# Usage errors: exit 2.
expect_exit(2 "${DUMP}")
expect_exit(2 "${DUMP}" --bogus "${DATA}/vocab/ggml-vocab-gpt-2.gguf")
expect_exit(2 "${DUMP}" "${DATA}/vocab/ggml-vocab-gpt-2.gguf" "${DATA}/vocab/ggml-vocab-gpt-2.gguf")

# Bad files: exit 1 with one error line.
expect_exit(1 "${DUMP}" "${WORK}/does-not-exist.gguf")
expect_error_line()
file(WRITE "${WORK}/bad-version.gguf" "GGUF\t\t\t\t")
expect_exit(1 "${DUMP}" --json "${WORK}/bad-version.gguf")
expect_error_line()
if(NOT err MATCHES "at byte 4")
  message(FATAL_ERROR "the error line should give the byte offset: ${err}")
endif()
file(WRITE "${WORK}/text.gguf" "not a gguf file at all")
expect_exit(1 "${DUMP}" "${WORK}/text.gguf")
expect_error_line()

# Success: the summary, and JSON identical to ggml's.
expect_exit(0 "${DUMP}" "${DATA}/quants/quants-s1.gguf")
if(NOT out MATCHES "tensors: 35")
  message(FATAL_ERROR "summary lacks the tensor count:\n${out}")
endif()
foreach(name vocab/ggml-vocab-phi-3 quants/quants-4d)
  execute_process(COMMAND "${DUMP}" --json "${DATA}/${name}.gguf" OUTPUT_FILE "${WORK}/out.json" RESULT_VARIABLE rc)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/out.json" "${DATA}/${name}.json" RESULT_VARIABLE same)
  if(NOT rc EQUAL 0 OR NOT same EQUAL 0)
    message(FATAL_ERROR "gguf-dump --json ${name}.gguf differs from ggml's JSON (exit ${rc})")
  endif()
endforeach()
