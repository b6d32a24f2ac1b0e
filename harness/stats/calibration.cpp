#include "stats/calibration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/file_io.h"

namespace kgate::stats {

namespace fs = std::filesystem;

double target_us(SizeClass c) {
  switch (c) {
    case SizeClass::k5us: return 5;
    case SizeClass::k50us: return 50;
    case SizeClass::k500us: return 500;
    case SizeClass::k5ms: return 5000;
  }
  return 0;
}

const char* to_string(SizeClass c) {
  switch (c) {
    case SizeClass::k5us: return "5us";
    case SizeClass::k50us: return "50us";
    case SizeClass::k500us: return "500us";
    case SizeClass::k5ms: return "5ms";
  }
  return "?";
}

SizeClass size_class_for(double median_us) {
  SizeClass best = SizeClass::k5us;
  double best_d = INFINITY;
  const double l = std::log(std::max(median_us, 1e-9));
  for (SizeClass c : kSizeClasses) {
    const double d = std::fabs(l - std::log(target_us(c)));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

const NoiseClass* Calibration::noise_for(double median_us) const {
  const NoiseClass* best = nullptr;
  double best_d = INFINITY;
  const double l = std::log(std::max(median_us, 1e-9));
  for (const NoiseClass& n : noise) {
    const double t = n.median_us > 0 ? n.median_us : n.target_us;
    if (!(t > 0)) continue;
    const double d = std::fabs(l - std::log(t));
    if (d < best_d) {
      best_d = d;
      best = &n;
    }
  }
  return best;
}

double Calibration::aa_spread_for(double median_us) const {
  const NoiseClass* n = noise_for(median_us);
  return n ? n->aa_spread : 0.0;
}

std::string device_slug(const std::string& device_name) {
  std::string s;
  for (unsigned char ch : device_name) {
    if (std::isalnum(ch)) {
      s += static_cast<char>(std::tolower(ch));
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "unknown" : s;
}

std::string default_calibration_path(const std::string& device_name) {
  fs::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "kgate";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".cache" / "kgate";
  } else {
    dir = fs::temp_directory_path() / "kgate";
  }
  return (dir / ("calibration-" + device_slug(device_name) + ".json")).string();
}

Calibration load_calibration(const std::string& path) {
  const std::string text =
      core::read_file_or_throw<InfraError>(path, path + ": error: cannot read calibration file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(path + ": error: not JSON: " + e.what());
  }
  if (!j.is_object()) throw UsageError(path + ": error: calibration must be a JSON object");
  const int version = j.value("version", 0);
  if (version != kCalibrationVersion)
    throw UsageError(path + ": error: calibration version " + std::to_string(version) +
                     ", this kgate reads version " + std::to_string(kCalibrationVersion) +
                     "; run `kgate doctor` again");
  try {
    return j.get<Calibration>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path + ": error: malformed calibration: " + e.what());
  }
}

std::optional<Calibration> find_calibration(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  return load_calibration(path);
}

void save_calibration(const std::string& path, const Calibration& c) {
  const core::WriteResult w = core::write_file_atomic(path, nlohmann::json(c).dump(2) + "\n");
  switch (w.stage) {
    case core::WriteResult::Stage::kOk: return;
    case core::WriteResult::Stage::kCreateDir:
      throw InfraError(w.where + ": error: cannot create directory: " + w.error);
    case core::WriteResult::Stage::kOpen: throw InfraError(w.tmp + ": error: cannot write");
    case core::WriteResult::Stage::kWrite: throw InfraError(w.tmp + ": error: write failed");
    case core::WriteResult::Stage::kRename: throw InfraError(path + ": error: cannot replace calibration file");
  }
}

}  // namespace kgate::stats
