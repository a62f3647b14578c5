#pragma once
// The core's one verdict, for make_plan and the searches of engines/core/search.cpp: a profile
// prices a row, the common findings are added, and total, headroom and verdict are settled, within
// the memory a budget or co-tenants leave (plan.cpp).

#include <optional>
#include <string>
#include <vector>

#include "engines/core/profile.h"
#include "kvplan/search.h"

namespace kvplan {

/// What a budget or other processes leave the engine on each GPU.
struct MemoryRoom {
  std::uint64_t bytes = 0;
  bool co_tenants = false;  ///< other processes' memory binds (not the budget)
  std::string why;          ///< "a budget of 10.00 GiB", "36.00 GiB held by other processes of 79.65 GiB"
};

/// The room `request` leaves on `gpu` (PlanRequest::budget_bytes, used_bytes, free_bytes), the
/// smallest when several are given; nullopt when none is. Throws Error for free or used memory
/// beyond the card's.
std::optional<MemoryRoom> memory_room(const PlanRequest& request, const GpuSpec& gpu);

/// make_plan with a profile the caller built by its engine's make() for the same model, GPUs and
/// settings (a request that differs in its caches, rows_only or section_words only, which no
/// profile reads when no engine option names a cache type): kvplan fit has one built already.
Plan make_plan_with(std::shared_ptr<const Profile> profile, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                    const PlanRequest& request);

/// find_limits with a profile the caller built by its engine's make() for the same model (any GPUs
/// and settings): the searches' profiles share what it read of the model alone (Profile::remake).
/// kvplan fit has one built already. `made` may be null.
Limits find_limits_with(const Profile* made, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                        const LimitsRequest& request);

/// The row `query` asks for, priced by `profile` and decided; within `room` when there is one.
/// Throws Error as the profile does.
Row settle(const Profile& profile, const RowQuery& query, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
           const std::optional<MemoryRoom>& room = std::nullopt);

/// settle() into `row`, which holds an earlier row (or none): its buffers reused (Profile::price_into).
/// `spent`, when given, holds findings of an earlier row: a finding the core adds (the trained
/// context's) takes over the strings of the one with its code instead of allocating its own.
void settle_into(Row& row, const Profile& profile, const RowQuery& query, const ModelSpec& model,
                 const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room = std::nullopt,
                 std::vector<Finding>* spent = nullptr);

/// settle(), and the row's decode-speed bound (Row::decode_bound): for the rows a user sees. The
/// searches' probes skip the bound; its words were a seventh of the headline command's start-up.
Row settle_shown(const Profile& profile, const RowQuery& query, const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                 const std::optional<MemoryRoom>& room = std::nullopt);

/// settle_shown() into `row`, its buffers and its decode bound's sentence reused: a sweep's rows.
/// `spent`, kept by the caller from row to row, takes the row's findings before it is settled
/// again, for the core's findings to reuse their strings (settle_into).
void settle_shown_into(Row& row, const Profile& profile, const RowQuery& query, const ModelSpec& model,
                       const std::vector<GpuSpec>& gpus, const std::optional<MemoryRoom>& room = std::nullopt,
                       std::vector<Finding>* spent = nullptr);

}  // namespace kvplan
