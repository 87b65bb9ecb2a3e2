// open_output_channel (see child_pty.h): openpty(3), then termios with OPOST and ECHO off.
#include "apps/ddlrun/child_pty.h"

#include <fcntl.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ddl::launcher {
namespace {

void own_end_flags(int fd) {
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

}  // namespace

OutputChannel open_pipe_channel() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  own_end_flags(fds[0]);
  return {fds[0], fds[1], false};
}

OutputChannel open_output_channel(const winsize* size, std::string* why) {
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, const_cast<winsize*>(size)) != 0) {
    if (why) *why = std::string("no pseudo-terminal (") + std::strerror(errno) + "): stdout is a pipe";
    return open_pipe_channel();
  }
  termios t{};
  if (tcgetattr(slave, &t) == 0) {
    t.c_oflag &= ~OPOST;  // no "\n" -> "\r\n"
    t.c_lflag &= ~(ECHO | ICANON | ISIG);
    tcsetattr(slave, TCSANOW, &t);
  }
  own_end_flags(master);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  return {master, slave, true};
}

}  // namespace ddl::launcher
