#include "reports/section.h"

#include "engines/core/profile.h"

namespace kvplan {

std::optional<EngineSection> engine_section(const Plan& plan) {
  if (!plan.profile) return std::nullopt;
  EngineSection section;
  plan.profile->write_section(plan, section);
  if (section.json_key.empty()) return std::nullopt;
  return section;
}

}  // namespace kvplan
