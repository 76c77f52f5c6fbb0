# The MPI layer (libchakra_replay): built only when CMake finds an MPI for C
# (scripts/install-deps.sh installs Debian's OpenMPI). The chakra program
# takes its replay command from cli/ when CHAKRA_HAVE_MPI is set here
# (the root CMakeLists); without MPI the command is absent and its tests
# skip.
find_package(MPI COMPONENTS C)
if(MPI_C_FOUND)
  file(GLOB CHAKRA_REPLAY_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/replay/*.c)
  # Compiled once, as chakra_obj is, for the CLI's archive and for
  # libchakra_replay.so. The MPI layer uses the library's private modules,
  # so the shared library is libchakra and replay.h in one: a program links
  # libchakra or libchakra_replay, never both (docs/library.md).
  add_library(chakra_replay_obj OBJECT ${CHAKRA_REPLAY_SOURCES})
  set_target_properties(chakra_replay_obj PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  target_compile_definitions(chakra_replay_obj PRIVATE CHAKRA_BUILDING)
  target_link_libraries(chakra_replay_obj PUBLIC chakra_obj MPI::MPI_C)
  add_library(chakra_replay STATIC $<TARGET_OBJECTS:chakra_replay_obj>)
  target_link_libraries(chakra_replay PUBLIC chakra_static MPI::MPI_C)
  add_library(chakra_replay_shared SHARED $<TARGET_OBJECTS:chakra_obj> $<TARGET_OBJECTS:chakra_replay_obj>)
  set_target_properties(chakra_replay_shared PROPERTIES OUTPUT_NAME chakra_replay VERSION ${PROJECT_VERSION}
    SOVERSION ${CHAKRA_SOVERSION} EXPORT_NAME chakra_replay)
  target_include_directories(chakra_replay_shared PUBLIC
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<BUILD_INTERFACE:${GEN_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(chakra_replay_shared PUBLIC PkgConfig::PROTOBUFC
    PRIVATE PkgConfig::YAJL PkgConfig::LIBYAML PkgConfig::EXPAT ZLIB::ZLIB m MPI::MPI_C)
  install(TARGETS chakra_replay ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(TARGETS chakra_replay_shared EXPORT chakraTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(CHAKRA_PC_NAME chakra-replay)
  set(CHAKRA_PC_LIB chakra_replay)
  set(CHAKRA_PC_WHAT "libchakra with chakra replay's MPI layer (replay.h)")
  configure_file(${CMAKE_SOURCE_DIR}/lib/chakra.pc.in ${CMAKE_BINARY_DIR}/chakra-replay.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/chakra-replay.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  set(CHAKRA_HAVE_MPI ON)
else()
  message(STATUS "MPI not found: chakra replay is not built (scripts/install-deps.sh installs OpenMPI)")
  set(CHAKRA_HAVE_MPI OFF)
endif()
