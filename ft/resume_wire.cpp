// Resume records and the transfer header (see resume_wire.h).
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/ft/resume_wire.h>

namespace ddl::ft::detail {

std::string ResumeRecord::line() const {
  if (kind == 'N') return "no snapshot at " + path;
  if (kind == 'S') return "snapshot at " + path + ": " + where + ", " + detail;
  return "could not use " + path + ": " + detail;
}

std::string encode_record(const ResumeRecord& r) {
  return std::string(1, r.kind) + "\n" + r.path + "\n" + r.where + "\n" + r.detail;
}

ResumeRecord decode_record(const std::string& s) {
  std::istringstream in(s);
  ResumeRecord r;
  std::string kind;
  std::getline(in, kind);
  std::getline(in, r.path);
  std::getline(in, r.where);
  std::getline(in, r.detail, '\0');  // the rest: an error may span lines
  r.kind = kind.size() == 1 && (kind[0] == 'N' || kind[0] == 'S') ? kind[0] : 'E';
  return r;
}

void encode_header(const TransferHeader& h, int64_t (&words)[kTransferWords]) {
  words[0] = kTransferMagic;
  words[1] = h.size;
  words[2] = h.piece;
}

TransferHeader decode_header(const int64_t (&words)[kTransferWords]) {
  DDL_CHECK(words[0] == kTransferMagic, "resume: rank 0's snapshot transfer began with ", words[0],
            ", not the expected header (another ddl version?)");
  const TransferHeader h{words[1], words[2]};
  DDL_CHECK(h.size >= -1 && h.size <= kMaxSnapshotBytes, "resume: rank 0 announced a snapshot of ", h.size,
            " bytes, outside [-1, ", kMaxSnapshotBytes, "]");
  DDL_CHECK(h.piece >= 1 && h.piece <= kPieceBytes, "resume: rank 0 announced pieces of ", h.piece,
            " bytes, outside [1, ", kPieceBytes, "]");
  return h;
}

}  // namespace ddl::ft::detail
