#include "core/disk_space.h"

#include <cstdlib>
#include <filesystem>

namespace kgate::core {
namespace fs = std::filesystem;

std::string disk_full_words(const std::string& text) {
  for (const char* words : {"No space left on device", "Disk quota exceeded", "File too large"})
    if (text.find(words) != std::string::npos) return words;
  return "";
}

std::string storage_trouble(const std::vector<std::string>& dirs, const std::string& text, std::uintmax_t low) {
  if (std::string words = disk_full_words(text); !words.empty()) return words;
  std::vector<std::string> all = dirs;
  const char* tmp = std::getenv("TMPDIR");
  all.emplace_back(tmp && *tmp ? tmp : "/tmp");
  for (const std::string& d : all) {
    if (d.empty()) continue;
    fs::path p(d);
    std::error_code ec;
    while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
    const fs::space_info sp = fs::space(p, ec);
    if (!ec && sp.available < low) return d + " has " + std::to_string(sp.available / 1024) + " KiB free";
  }
  return "";
}

}  // namespace kgate::core
