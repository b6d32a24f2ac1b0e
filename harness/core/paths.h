#pragma once
// Where kgate's own files are at run time. An installed kgate (`cmake --install BUILD
// --prefix P`: P/bin/kgate, P/bin/kgate-native, P/share/kgate/..., P/include/kgate/kernel.h)
// finds them relative to its executable, without any environment variable; a kgate run
// from its build tree uses the source tree it was built from.
#include <string>

namespace kgate::paths {

// P when the running executable is P/bin/<exe> and P/share/kgate/configs/gpus exists;
// "" when kgate runs from a build tree.
std::string install_prefix();

// kgate's data: configs/gpus (the built-in GPU targets), configs/levels, suites/,
// kernelbench/ (native problems and starters), ci/ (the CI templates). P/share/kgate when
// installed, else the source tree.
std::string data_dir();

// The directory that holds kgate/kernel.h: $KGATE_INCLUDE_DIR, else P/include when
// installed, else the source tree's harness/include.
std::string include_dir();

// The built-in GPU targets: data_dir()/configs/gpus.
std::string builtin_gpus_dir();

// `p` made absolute against the working directory and lexically normalised ("a/../b" ->
// "b", no symlinks resolved); `p` unchanged when the working directory cannot be read.
std::string absolute(const std::string& p);

// $KGATE_CACHE_DIR made absolute: the compile caches kept across runs (torch.compile's
// models, Triton and native builds); "" when unset. `kgate run --cache` overrides it.
std::string kept_cache_dir();

// Refuses an output directory that names a file, or one below a file: a UsageError
// ("OUT: not a directory (it is a file); --out names the output directory"), exit 2, not
// the machine's error a failed create_directories would be. Every command's --out.
void require_output_dir(const std::string& dir);

}  // namespace kgate::paths
