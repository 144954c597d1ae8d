# Checks gguf-dump's command-line contract. Run by ctest: cmake -DDUMP=... -DDATA=... -DWORK=... -P cli_test.cmake
# (-DRUN=wine or qemu-...: the emulator a cross build runs its programs with).
file(MAKE_DIRECTORY "${WORK}")

function(expect_exit code)
  execute_process(COMMAND ${RUN} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
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

# Every tool: --help (usage and what the output is, exit 0), --version, usage errors (exit 2, usage on
# stderr), and `--` ending the options.
foreach(tool "${DUMP}" "${DEQUANT}" "${LOAD}" "${METADATA}")
  expect_exit(0 "${tool}" --help)
  if(NOT out MATCHES "^usage: gguf-[a-z]+ " OR NOT out MATCHES "Exit status: 0 success")
    message(FATAL_ERROR "${tool} --help:\n${out}")
  endif()
  expect_exit(0 "${tool}" --version)
  if(NOT out MATCHES "^gguf-[a-z]+ [0-9]+\\.[0-9]+\\.[0-9]+ \\(gguf library")
    message(FATAL_ERROR "${tool} --version: ${out}")
  endif()
  expect_exit(2 "${tool}" --no-such-option)
  if(NOT err MATCHES "unknown option '--no-such-option'\nusage: gguf-")
    message(FATAL_ERROR "${tool}: a usage error should name the problem and print the usage: ${err}")
  endif()
  expect_exit(2 "${tool}")
endforeach()
# After `--`, "--json" is a file name, not the option.
expect_exit(1 "${DUMP}" -- --json)
expect_error_line()
# The output is documented where a user looks for it.
expect_exit(0 "${DEQUANT}" --help)
if(NOT out MATCHES "little-endian float32" OR NOT out MATCHES "'-' is standard output")
  message(FATAL_ERROR "gguf-dequant --help should say what OUT receives:\n${out}")
endif()

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

# Damaged files: the error line names the failing field's offset and what happened to the file.
foreach(case "damaged-text-replaced|U\\+FFFD replacement characters, the first at byte [0-9]+"
             "damaged-crlf|copied in text mode"
             "damaged-zero-tail|all zeros from byte [0-9]+ to its end"
             "damaged-truncated|the file ends at byte [0-9]+, before the data it declares")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 pattern)
  foreach(tool "${DUMP}" "${DEQUANT}" "${LOAD}" "${METADATA}")
    if(tool STREQUAL "${DEQUANT}")
      expect_exit(1 "${tool}" "${SEEDS}/${name}.gguf" t "${WORK}/x.bin")
    else()
      expect_exit(1 "${tool}" "${SEEDS}/${name}.gguf")
    endif()
    expect_error_line()
    if(NOT err MATCHES "\\(at byte [0-9]+\\); " OR NOT err MATCHES "${pattern}")
      message(FATAL_ERROR "${name}: the error line should give the offset and match '${pattern}': ${err}")
    endif()
  endforeach()
endforeach()

# Success: the summary, and JSON identical to ggml's.
expect_exit(0 "${DUMP}" "${DATA}/quants/quants-s1.gguf")
if(NOT out MATCHES "tensors: 35")
  message(FATAL_ERROR "summary lacks the tensor count:\n${out}")
endif()
foreach(name vocab/ggml-vocab-phi-3 quants/quants-4d)
  execute_process(COMMAND ${RUN} "${DUMP}" --json "${DATA}/${name}.gguf" OUTPUT_FILE "${WORK}/out.json" RESULT_VARIABLE rc)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/out.json" "${DATA}/${name}.json" RESULT_VARIABLE same)
  if(NOT rc EQUAL 0 OR NOT same EQUAL 0)
    message(FATAL_ERROR "gguf-dump --json ${name}.gguf differs from ggml's JSON (exit ${rc})")
  endif()
endforeach()

# gguf-dequant: float32 LE of a tensor, equal to ggml's (the .expected twin holds ggml's floats as f32).
expect_exit(2 "${DEQUANT}")
expect_exit(2 "${DEQUANT}" "${DATA}/quants/quants-s1.gguf" t.q4_K)
expect_exit(1 "${DEQUANT}" "${WORK}/does-not-exist.gguf" t.q4_K "${WORK}/x.bin")
expect_error_line()
expect_exit(1 "${DEQUANT}" "${DATA}/quants/quants-s1.gguf" no.such.tensor "${WORK}/x.bin")
expect_error_line()
if(NOT err MATCHES "no tensor named 'no.such.tensor' \\(list the tensor names with: gguf-dump ")
  message(FATAL_ERROR "an unknown tensor should point to gguf-dump: ${err}")
endif()
expect_exit(1 "${DUMP}" "${WORK}/does-not-exist.gguf")
if(NOT err MATCHES "cannot open file: [A-Za-z]")  # the OS's words: "No such file or directory", "File not found"
  message(FATAL_ERROR "an I/O error should give the OS's reason: ${err}")
endif()
expect_exit(1 "${DEQUANT}" "${WORK}/bad-version.gguf" t.q4_K "${WORK}/x.bin")
expect_error_line()
foreach(type q4_K iq2_xs f16 bf16 tq1_0)
  expect_exit(0 "${DEQUANT}" "${DATA}/quants/quants-4d.gguf" t.${type} "${WORK}/ours.bin")
  expect_exit(0 "${DEQUANT}" "${DATA}/quants/quants-4d.expected.gguf" t.${type} "${WORK}/ggml.bin")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/ours.bin" "${WORK}/ggml.bin" RESULT_VARIABLE same)
  file(SIZE "${WORK}/ours.bin" size)
  if(NOT same EQUAL 0 OR size EQUAL 0)
    message(FATAL_ERROR "gguf-dequant t.${type} differs from ggml's floats (or is empty)")
  endif()
endforeach()

# gguf-metadata: hyperparameters, vocabulary, special tokens.
expect_exit(0 "${METADATA}" "${DATA}/model/tiny-llama-q4_K_M.gguf")
if(NOT out MATCHES "architecture: llama" OR NOT out MATCHES "layers +2" OR NOT out MATCHES "vocabulary: 256 tokens"
   OR NOT out MATCHES "bos +1 \"<s>\"")
  message(FATAL_ERROR "gguf-metadata output:\n${out}")
endif()

# gguf-load: every tensor of the model as floats, and a checksum line.
expect_exit(2 "${LOAD}")
expect_exit(1 "${LOAD}" "${WORK}/bad-version.gguf")
expect_error_line()
expect_exit(0 "${LOAD}" "${DATA}/model/tiny-llama-q4_K_M.gguf")
if(NOT out MATCHES "llama, 2 layers, 21 tensors" OR NOT out MATCHES "918784 floats, checksum [0-9a-f]+")
  message(FATAL_ERROR "gguf-load output:\n${out}")
endif()
