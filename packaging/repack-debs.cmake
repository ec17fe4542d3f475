# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): makes CPack's packages lintian-clean.
#  - The debug packages (<package>-dbgsym .ddeb): CMake 3.25's CPack writes their md5sums with the staging
#    directory's absolute paths (lintian: md5sums-lists-nonexistent-file) and gives them no copyright or
#    changelog. Each is unpacked, gets md5sums relative to the root as dpkg expects and its doc directory
#    pointing at its package's (a symlink, as debhelper's dbgsym packages do: a debug package holds nothing
#    but debug files, and it depends on exactly that package, whose copyright and changelog are there).
#  - libgpupart1: CPack adds postinst and postrm scripts that only call ldconfig; the package's ldconfig
#    trigger does that (lintian: maintscript-calls-ldconfig), so they are removed, as debhelper leaves them out.
# Each is packed again with root as owner.
function(repack file root)
  execute_process(COMMAND dpkg-deb --root-owner-group -Zxz --build "${root}" "${file}" OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${root}")
endfunction()

foreach(file IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(name "${file}" NAME)
  set(root "${file}.repack")
  if(name MATCHES "^(.+)-dbgsym_.*\\.ddeb$")
    set(package "${CMAKE_MATCH_1}")
    file(REMOVE_RECURSE "${root}")
    execute_process(COMMAND dpkg-deb --raw-extract "${file}" "${root}" COMMAND_ERROR_IS_FATAL ANY)
    file(MAKE_DIRECTORY "${root}/usr/share/doc")
    file(CREATE_LINK "${package}" "${root}/usr/share/doc/${package}-dbgsym" SYMBOLIC)
    file(GLOB_RECURSE payload LIST_DIRECTORIES false RELATIVE "${root}" "${root}/usr/lib/*")
    list(SORT payload)
    set(sums "")
    foreach(path IN LISTS payload)
      file(MD5 "${root}/${path}" sum)
      string(APPEND sums "${sum}  ${path}\n")
    endforeach()
    file(WRITE "${root}/DEBIAN/md5sums" "${sums}")
    file(CHMOD "${root}/DEBIAN/md5sums" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    repack("${file}" "${root}")
  elseif(name MATCHES "^libgpupart1_.*\\.deb$")
    file(REMOVE_RECURSE "${root}")
    execute_process(COMMAND dpkg-deb --raw-extract "${file}" "${root}" COMMAND_ERROR_IS_FATAL ANY)
    foreach(script postinst postrm)
      if(EXISTS "${root}/DEBIAN/${script}")
        file(READ "${root}/DEBIAN/${script}" text)
        # Only CPack's own ldconfig script goes; anything else would be ours and stays.
        string(REGEX REPLACE "[ \t\n]" "" compact "${text}")
        if(NOT compact MATCHES "^#!/bin/shset-eif\\[\"\\$1\"=\"[a-z]+\"\\];thenldconfigfi$")
          message(FATAL_ERROR "libgpupart1's ${script} is not CPack's ldconfig call:\n${text}")
        endif()
        file(REMOVE "${root}/DEBIAN/${script}")
      endif()
    endforeach()
    repack("${file}" "${root}")
  endif()
endforeach()
