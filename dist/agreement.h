// Agreement between ranks on small facts (where to resume, which file, which settings):
// each rank contributes a text record through one fixed-size all_gather, so ranks that
// disagree still make identical calls and the transport cannot break; the caller decides
// what a difference means. Also a length-prefixed broadcast of bytes. CPU tensors only
// (gloo, or the CPU side of "auto"). It does not retry, and it cannot detect a rank that
// never calls: that one shows as the group's timeout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <ddl/dist/process_group.h>

namespace ddl::dist {

// The bytes every record occupies on the wire; longer records are cut to kRecordBytes - 1.
inline constexpr size_t kRecordBytes = 1024;

// A collective: every rank calls it once, in the same order as its other collectives.
// Returns every rank's record, out[r] being rank r's (records must not contain '\0').
std::vector<std::string> all_gather_records(ProcessGroup& group, const std::string& record);

// "<headline>:\n  rank 0: <line 0>\n  rank 1: <line 1>...", then "\n<advice>" when advice is
// not empty: the message a disagreement is reported with, the same on every rank.
std::string rank_lines_message(const std::string& headline, const std::vector<std::string>& lines,
                               const std::string& advice = {});

// A collective: returns root's `bytes` on every rank (other ranks' argument is ignored), sent
// as its length and then the bytes, in two broadcasts.
std::string broadcast_bytes(ProcessGroup& group, const std::string& bytes, int root);

}  // namespace ddl::dist
