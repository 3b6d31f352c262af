#include "worker/phases.h"

namespace kernrl {

std::map<std::string, double>& phase_totals() {
  static std::map<std::string, double> totals;
  return totals;
}

}  // namespace kernrl
