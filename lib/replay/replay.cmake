# chakra replay runs over MPI: built only when CMake finds an MPI for C
# (scripts/install-deps.sh installs Debian's OpenMPI). Without MPI the
# command is absent from the chakra program and its tests skip.
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND)
  file(GLOB CHAKRA_REPLAY_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/replay/*.c)
  add_library(chakra_replay STATIC ${CHAKRA_REPLAY_SOURCES})
  target_link_libraries(chakra_replay PUBLIC chakra_static MPI::MPI_C)
  target_sources(chakra PRIVATE ${CMAKE_SOURCE_DIR}/cli/cmd_replay.c)
  target_compile_definitions(chakra PRIVATE CHAKRA_HAVE_MPI=1)
  target_link_libraries(chakra PRIVATE chakra_replay)
  install(TARGETS chakra_replay ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(CHAKRA_HAVE_MPI ON)
else()
  message(STATUS "MPI not found: chakra replay is not built (scripts/install-deps.sh installs OpenMPI)")
  set(CHAKRA_HAVE_MPI OFF)
endif()
