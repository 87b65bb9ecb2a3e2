// Gloo's network thread throws when the protocol breaks (a message larger than the buffer
// posted for it: ranks called operations of different sizes, e.g. "op.preamble.length <=
// op.nbytes"). An exception that escapes a thread ends the process with SIGABRT and a bare
// "terminate called". This turns that into a message naming what each live group of this
// process was doing, and a plain exit with kGlooAbortExit, so launchers and the other
// ranks see an ordinary failure. It cannot resume the run: Gloo's thread is gone.
#pragma once

#include <functional>
#include <string>

namespace ddl::dist::detail {

inline constexpr int kGlooAbortExit = 70;  // EX_SOFTWARE in sysexits.h

// Installs the terminate handler once per process; exceptions that are not Gloo's go to
// the handler that was there before.
void install_gloo_abort_handler();

// Note [SIGPIPE]: Gloo's TCP pairs write with writev(2), which raises SIGPIPE when the
// peer has closed its end (a rank that died). Its default action ends this process at
// once, silently, where the read side would have reported the dead peer by name. Python
// ignores SIGPIPE from startup, so PyTorch's ranks never see it; a C++ program does. This
// sets SIGPIPE to SIG_IGN once, only while it still has its default action (a handler the
// program installed itself is left alone), so the write fails with EPIPE and Gloo raises
// an IoException that names the peer (signal(7), writev(2)).
void ignore_sigpipe_if_default();

// Registers a description of what a group is doing (called from the handler: it must not
// block; return "" when it cannot tell). Returns an id for unregister_in_flight.
int register_in_flight(std::function<std::string()> describe);
void unregister_in_flight(int id);

}  // namespace ddl::dist::detail
