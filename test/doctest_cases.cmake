# One CTest test per doctest case of one test binary, read when ctest starts (a directory's
# TEST_INCLUDE_FILES; test/CMakeLists.txt's leasehold_test() writes the variables below), so the
# list follows every rebuild and no stale list survives one. Our own, not doctest-dev's
# doctest_discover_tests: that one lists the cases at link time, passes names to doctest's
# --test-case as given (a filter: `*` and `?` are wildcards, `,` separates, case-insensitive; our
# names hold all of these and `;`) and does not fail when a filter matches nothing.
#
# In:  exe (the binary), binary (its target name), labels, timeout.
# Out: tests "<binary>/<case name>" (`;` in a name shown as `,`), each running exactly one case:
#      the filter is the name with `*`, `?` and `;` as `?` and `,` escaped, matched
#      case-sensitively, and a summary other than "test cases: 1" fails the test. A binary that
#      is not built, or does not list its cases, is one failing test "<binary>".
if(NOT EXISTS "${exe}")
  add_test("${binary}" "${exe}")  # fails: not built
  set_tests_properties("${binary}" PROPERTIES LABELS "${labels}")
  return()
endif()
execute_process(COMMAND "${exe}" --list-test-cases OUTPUT_VARIABLE out RESULT_VARIABLE rc
                TIMEOUT 60)
if(NOT rc EQUAL 0)
  add_test("${binary}" "${exe}" --list-test-cases)
  set_tests_properties("${binary}" PROPERTIES LABELS "${labels}")
  return()
endif()
# Walk the lines by hand: CMake lists would split at `;` and join across `[`...`]`.
set(seen "")
while(NOT out STREQUAL "")
  string(FIND "${out}" "\n" nl)
  if(nl EQUAL -1)
    set(line "${out}")
    set(out "")
  else()
    string(SUBSTRING "${out}" 0 ${nl} line)
    math(EXPR rest "${nl} + 1")
    string(SUBSTRING "${out}" ${rest} -1 out)
  endif()
  if(line STREQUAL "" OR line MATCHES "^\\[doctest\\] " OR line MATCHES "^=+$")
    continue()
  endif()
  string(REGEX REPLACE "[*?;]" "?" filter "${line}")
  string(REPLACE "," "\\," filter "${filter}")
  string(REPLACE ";" "," shown "${line}")
  set(name "${binary}/${shown}")
  add_test("${name}" "${exe}" "--test-case=${filter}" --case-sensitive=true)
  # Exactly one case ran: doctest exits 0 when a filter matches none.
  set_tests_properties("${name}" PROPERTIES LABELS "${labels}" TIMEOUT ${timeout}
                       FAIL_REGULAR_EXPRESSION "\\[doctest\\] test cases: +([02-9]|[1-9][0-9]+) ")
endwhile()
