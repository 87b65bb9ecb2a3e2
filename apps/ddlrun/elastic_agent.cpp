// The elastic agent's loop (see elastic_agent.h): rendezvous, run the round's workers,
// and on their failure or a membership change go to the next round, as torchrun's
// SimpleElasticAgent does (its _invoke_run: a failure restarts while restarts remain, a
// waiting node restarts without counting).
#include "apps/ddlrun/elastic_agent.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "apps/ddlrun/elastic_rendezvous.h"
#include "apps/ddlrun/node_command.h"
#include "apps/ddlrun/output_relay.h"
#include <ddl/dist/store/tcp_store.h>
#include <ddl/dist/transport/shm_segment.h>

namespace ddl::launcher::elastic {

int run_agent(Config cfg, const ElasticSpec& spec, const std::string& token) {
  install_signal_handlers();
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const std::string me = "ddlrun: elastic: node " + std::to_string(spec.node_id) + " (" + host + "): ";
  // Every candidate serves from its start; See Note [Elastic store failover].
  std::unique_ptr<dist::TCPStoreServer> server;
  if (spec.node_id < static_cast<int>(spec.candidates.size()))
    server = std::make_unique<dist::TCPStoreServer>(spec.bind.empty() ? spec.candidates[spec.node_id] : spec.bind,
                                                    cfg.master_port, token);
  RendezvousConfig rc;
  rc.min_nodes = spec.min_nodes;
  rc.max_nodes = spec.max_nodes;
  rc.node_id = spec.node_id;
  rc.candidates = spec.candidates;
  rc.port = cfg.master_port;
  rc.token = token;
  rc.last_call_s = spec.last_call_s;
  rc.join_timeout_s = spec.join_timeout_s;
  const std::string run_id = "ddlrun" + std::to_string(getpid()) + "_" + random_token().substr(0, 8);
  cfg.host_label = host;  // a failed rank is named with its host, as under --hosts
  cfg.extra_env.emplace_back("DDL_ELASTIC", "1");
  cfg.extra_env.emplace_back("DDL_ELASTIC_NODE", std::to_string(spec.node_id));
  int failures = 0, rc_exit = 0;
  Rendezvous rdzv(rc);
  auto linger = [&] {  // the others' workers and agents may still use this node's store
    rdzv.disconnect();
    if (server) server->linger(std::chrono::seconds(10));
  };
  while (true) {
    Round round;
    try {
      round = rdzv.next_round();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s%s\n", me.c_str(), e.what());
      linger();
      return 1;
    }
    if (round.job_done) {
      std::fprintf(stderr, "%sthe job finished on the other nodes; nothing to join\n", me.c_str());
      linger();
      return rc_exit;
    }
    std::string nodes;
    for (int n : round.nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    std::fprintf(stderr, "%sround %d: nodes %s, world size %zu, this node's ranks from %d, store %s\n", me.c_str(),
                 round.number, nodes.c_str(), round.nodes.size() * cfg.nproc, round.position * cfg.nproc,
                 round.store_host.c_str());
    cfg.nnodes = static_cast<int>(round.nodes.size());
    cfg.node_rank = round.position;
    cfg.master_addr = round.store_host;
    cfg.stop_check = [&] { return rdzv.membership_changed(round); };
    Outcome r;
    {
      OutputRelay relay(relay_options(cfg));
      r = run_attempt(cfg, round.number, std::to_string(cfg.master_port), token, run_id, relay);
      for (const std::string& n : dist::detail::remove_shm_segments(run_id)) (void)n;
    }
    if (r.kind == Outcome::Ok) {
      std::fprintf(stderr, "%sthe workers finished (round %d)\n", me.c_str(), round.number);
      rdzv.mark_done();
      linger();
      return 0;
    }
    if (r.kind == Outcome::Interrupted) return r.exit_code;
    if (r.kind == Outcome::Stopped) {
      std::fprintf(stderr, "%smembership changed: %s; restarting the workers in a new round\n", me.c_str(),
                   rdzv.why().c_str());
      continue;
    }
    // Workers that failed after another node left the round (stopped its workers for a
    // waiting node, or failed first) are that membership change's collateral, not a failure
    // of this node's: not counted, or one restart for a joining node would cost every node one.
    if (rdzv.next_round_open(round)) {
      std::fprintf(stderr, "%sthe workers failed after another node moved to round %d; joining it (not counted)\n",
                   me.c_str(), round.number + 1);
      continue;
    }
    rc_exit = r.exit_code;
    if (++failures > cfg.max_restarts) {
      std::fprintf(stderr, "%sthe workers failed %d time(s), more than --max-restarts %d: giving up\n", me.c_str(),
                   failures, cfg.max_restarts);
      linger();
      return rc_exit;
    }
    std::fprintf(stderr, "%sthe workers failed (restart %d of %d); joining a new round\n", me.c_str(), failures,
                 cfg.max_restarts);
  }
}

}  // namespace ddl::launcher::elastic
