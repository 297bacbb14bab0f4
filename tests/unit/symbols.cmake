# test_symbols: /proc maps + build-ids, DWARF unwinding, symbolization
# (symbols/proc_maps.h, unwind.h, symbolize.h).  Included from
# tests/unit/CMakeLists.txt.

# The fixture's code generation is what is under test: -O2, DWARF, and no
# frame pointers, whatever the build type or ARGUS_SANITIZE add (so its
# options replace the directory-wide ones rather than extend them).
add_executable(busy_nofp ${CMAKE_CURRENT_LIST_DIR}/busy_nofp.c)
set_target_properties(busy_nofp PROPERTIES
  COMPILE_OPTIONS "-O2;-g;-fomit-frame-pointer;-Wall;-Wextra;-Werror"
  LINK_OPTIONS "")

add_executable(test_symbols ${CMAKE_CURRENT_LIST_DIR}/test_symbols.c)
target_link_libraries(test_symbols PRIVATE argus_symbols)
target_compile_definitions(test_symbols PRIVATE
  BUSY_NOFP_PATH="$<TARGET_FILE:busy_nofp>")
add_dependencies(test_symbols busy_nofp)
add_test(NAME test_symbols COMMAND test_symbols)

# test_unwind_helper: the same sample unwound through the sandboxed helper
# process (symbols/unwind_helper.h), which is killed and stopped on purpose.
add_executable(test_unwind_helper ${CMAKE_CURRENT_LIST_DIR}/test_unwind_helper.c)
target_link_libraries(test_unwind_helper PRIVATE argus_symbols)
target_compile_definitions(test_unwind_helper PRIVATE
  BUSY_NOFP_PATH="$<TARGET_FILE:busy_nofp>")
add_dependencies(test_unwind_helper busy_nofp)
add_test(NAME test_unwind_helper COMMAND test_unwind_helper)
set_tests_properties(test_unwind_helper PROPERTIES TIMEOUT 60)
