// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for deriving per-job store tokens
// from a per-user secret (Note [Job tokens] in dist/env.cpp). Small on purpose: no general
// crypto, and nothing here is constant-time beyond what the token comparison needs.
#pragma once

#include <string>
#include <string_view>

namespace ddl::dist::detail {

// Lower-case hex digests.
std::string sha256_hex(std::string_view data);
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

}  // namespace ddl::dist::detail
