# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): makes the gpupart-dbgsym .ddeb lintian-clean.
# CMake 3.25's CPack writes its md5sums with the staging directory's absolute paths (lintian:
# md5sums-lists-nonexistent-file) and gives the package no copyright or changelog. This unpacks it, writes
# md5sums relative to the root as dpkg expects, points its doc directory at the main package's (a symlink, as
# debhelper's dbgsym packages do: a debug package holds nothing but debug files, and it depends on exactly
# this gpupart, whose copyright and changelog are there), and packs it again with root as owner. The main
# .deb is left as it is.
foreach(file IN LISTS CPACK_PACKAGE_FILES)
  if(NOT file MATCHES "-dbgsym_.*\\.ddeb$")
    continue()
  endif()
  set(root "${file}.repack")
  file(REMOVE_RECURSE "${root}")
  execute_process(COMMAND dpkg-deb --raw-extract "${file}" "${root}" COMMAND_ERROR_IS_FATAL ANY)
  file(MAKE_DIRECTORY "${root}/usr/share/doc")
  file(CREATE_LINK gpupart "${root}/usr/share/doc/gpupart-dbgsym" SYMBOLIC)
  file(GLOB_RECURSE payload LIST_DIRECTORIES false RELATIVE "${root}" "${root}/usr/lib/*")
  list(SORT payload)
  set(sums "")
  foreach(path IN LISTS payload)
    file(MD5 "${root}/${path}" sum)
    string(APPEND sums "${sum}  ${path}\n")
  endforeach()
  file(WRITE "${root}/DEBIAN/md5sums" "${sums}")
  file(CHMOD "${root}/DEBIAN/md5sums" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  execute_process(COMMAND dpkg-deb --root-owner-group -Zxz --build "${root}" "${file}" OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${root}")
endforeach()
