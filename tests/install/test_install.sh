#!/usr/bin/env bash
# Installs ddl from the existing build directory into a temporary prefix (meson install
# --no-rebuild --destdir: nothing is rebuilt, nothing goes to /usr/local) and uses it as a
# user would: every installed header compiles (with no CUDA or Eigen include path), the
# installed programs run from the prefix, and the programs in consumer/ (a tiny training
# run, a 2-process all_reduce) build and run through pkg-config with plain g++, CMake's
# find_package(ddl) and meson's dependency('ddl'). A student's strategy (consumer/
# student_tree.cpp) is built outside the tree as a plugin, with pkg-config and with CMake,
# and the installed train_cifar and sync_study train with it on 2 ranks as with the
# built-in allreduce; the installed ddl-grade grades the installed lab skeleton and the
# tree. Then the prefix is moved and the programs build and run again (relocatable
# package files, $ORIGIN rpaths). Every temporary folder is removed on exit.
# A project with headers named like ddl's builds with -I. first (Note [A project with headers
# named like ddl's]). Env: BUILD_ROOT (meson's build dir), CONSUMER_SRC (consumer/),
# USER_PROJECT_SRC (user_project/).
set -euo pipefail

BUILD_ROOT=${BUILD_ROOT:?BUILD_ROOT: the meson build directory}
CONSUMER_SRC=${CONSUMER_SRC:-$(cd "$(dirname "$0")" && pwd)/consumer}
USER_PROJECT_SRC=${USER_PROJECT_SRC:-$(cd "$(dirname "$0")" && pwd)/user_project}
for tool in pkg-config cmake meson ninja g++; do
  if ! command -v "$tool" > /dev/null; then
    echo "install: SKIP: $tool is missing (scripts/setup.sh installs it)"
    exit 77
  fi
done

tmp=$(mktemp -d /tmp/ddl-install-test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Nothing from the build directory or the environment may stand in for the install.
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH CPATH CPLUS_INCLUDE_PATH LIBRARY_PATH
export DDL_TIMEOUT=60  # a rank that cannot find its peer fails in a minute, never hangs
fail() {
  echo "install: FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

# The install layout meson was configured with (prefix, libdir, ... as meson introspect says).
read -r prefix libdir includedir bindir < <(meson introspect "$BUILD_ROOT" --buildoptions |
  python3 -c 'import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], o["libdir"], o["includedir"], o["bindir"])')

step "meson install --no-rebuild --destdir (prefix $prefix)"
meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$tmp/stage" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "meson install failed"; }
root="$tmp/stage$prefix"  # a prefix other than the configured one already: the files must not care

uses_prefix_lib() {  # $1 program, $2 prefix: the dynamic loader finds libddl.so in that prefix
  local found
  found=$(ldd "$1" | awk '$1 == "libddl.so" { print $3 }')
  [ -n "$found" ] && [ -f "$found" ] && [ "$(realpath "$found")" = "$(realpath "$2/$libdir/libddl.so")" ] ||
    fail "$1 does not load $2's libddl.so: $(ldd "$1" | grep libddl)"
}

check_tree() {  # $1: the prefix as it lies now
  local p=$1
  export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
  step "ddl.pc and the CMake package in $p"
  [ -f "$p/$libdir/cmake/ddl/ddlConfig.cmake" ] && [ -f "$p/$libdir/cmake/ddl/ddlConfigVersion.cmake" ] ||
    fail "no ddlConfig.cmake / ddlConfigVersion.cmake under $p/$libdir/cmake/ddl"
  grep -q '^prefix=${pcfiledir}/' "$PKG_CONFIG_PATH/ddl.pc" || fail "ddl.pc does not find its prefix from its own folder"
  ! grep -q eigen3 "$PKG_CONFIG_PATH/ddl.pc" || fail "ddl.pc still asks for eigen3"
  local cflags
  cflags=$(pkg-config --cflags ddl) || fail "pkg-config --cflags ddl failed"
  [[ " $cflags " == *" -std=c++20 "* ]] || fail "pkg-config --cflags ddl lacks -std=c++20: $cflags"
  [ "$(realpath "$(pkg-config --variable=prefix ddl)")" = "$(realpath "$p")" ] ||
    fail "ddl.pc's prefix is $(pkg-config --variable=prefix ddl), not $p"
  [ "$(realpath "$(pkg-config --variable=includedir ddl)")" = "$(realpath "$p/$includedir")" ] ||
    fail "ddl.pc's includedir is $(pkg-config --variable=includedir ddl)"

  step "installed programs run from $p/$bindir and load $p's libddl.so"
  for prog in ddlrun train_cifar sync_study ddl-grade; do
    [ -x "$p/$bindir/$prog" ] || fail "$prog is not installed in $p/$bindir"
    "$p/$bindir/$prog" --help > /dev/null || fail "$p/$bindir/$prog --help failed"
    uses_prefix_lib "$p/$bindir/$prog" "$p"
  done
}

check_headers() {  # every installed header, and all it includes, from the install alone
  local p=$1
  local inc="$p/$includedir/ddl"
  step "every installed header compiles with pkg-config's flags only"
  [ -f "$inc/dist/dist.h" ] && [ -f "$inc/ddl.h" ] && [ -f "$inc/ddl_config.h" ] ||
    fail "dist/dist.h, ddl.h or ddl_config.h is not installed"
  # Third-party headers a user of an install may not have: libddl.so keeps them inside.
  if grep -rEn '^\s*#\s*include\s*[<"](Eigen/|unsupported/Eigen|gloo/|cuda|cublas|cudnn|nccl|stb|zlib|jpeglib|hiredis|infiniband/|CLI/|fmt/)' "$inc"; then
    fail "an installed header includes a third-party header that ddl.pc does not require (above)"
  fi
  (cd "$inc" && find . -name '*.h' | sort | sed 's|^\./\(.*\)|#include <ddl/\1>|') > "$tmp/all_headers.cpp"
  echo "int main() { return 0; }" >> "$tmp/all_headers.cpp"
  local n
  n=$(grep -c '#include' "$tmp/all_headers.cpp")
  # <ddl/...> resolves against the install only: a header missing from it fails here.
  # -Werror: a user building with -Wall -Wextra -Werror must not see warnings from ddl's headers.
  g++ $(pkg-config --cflags ddl) -fsyntax-only -Wall -Wextra -Werror "$tmp/all_headers.cpp" 2> "$tmp/headers.err" ||
    { head -30 "$tmp/headers.err"; fail "the $n installed headers do not compile from $inc with -Wall -Wextra -Werror (a warning above, or a header they include is not installed?)"; }
  echo "   $n headers"
  # nlohmann_json is required exactly when an installed header includes it.
  local pc="$p/$libdir/pkgconfig/ddl.pc" cm="$p/$libdir/cmake/ddl/ddlConfig.cmake"
  if grep -rlE '^\s*#\s*include\s*[<"]nlohmann/' "$inc"; then
    grep -q '^Requires:.*nlohmann_json' "$pc" || fail "an installed header (above) includes nlohmann/ but ddl.pc does not require nlohmann_json"
    grep -q 'find_dependency(nlohmann_json' "$cm" || fail "an installed header includes nlohmann/ but ddlConfig.cmake does not find nlohmann_json"
  else
    ! grep -q nlohmann_json "$pc" "$cm" || fail "ddl.pc or ddlConfig.cmake requires nlohmann_json, which no installed header includes"
  fi
}

# Note [A project with headers named like ddl's]
# A user's project with its own data/dataset.h and nn/module.h, built with -I. first (as
# many are) and ddl included as <ddl/...>. ddl's headers include each other as <ddl/...>
# too, so none of them may reach the project's files (g++ -H lists every include, one dot
# per level), and the project must build with -Wall -Wextra -Werror and run. When ddl's
# headers included each other by layer paths ("nn/module.h"), -I. handed ddl/nn/layers.h
# the project's nn/module.h and the build failed.
user_project() {  # $1 prefix
  local p=$1 out="$tmp/user_project" rc=0
  step "a project with its own data/dataset.h and nn/module.h: -I. first, <ddl/...>, -Wall -Wextra -Werror"
  rm -rf "$out" && cp -r "$USER_PROJECT_SRC" "$out"
  export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
  local flags=(-I. $(pkg-config --cflags ddl) -Wall -Wextra -Werror)
  (cd "$out" && g++ "${flags[@]}" -E -H main.cpp -o /dev/null) 2> "$out/includes.txt" ||
    { cat "$out/includes.txt"; fail "the user project does not even preprocess"; }
  (cd "$out" && g++ "${flags[@]}" main.cpp -o user_project $(pkg-config --libs ddl) \
    -Wl,-rpath,"$(pkg-config --variable=libdir ddl)") > "$out/build.log" 2>&1 || rc=$?
  # Two or more dots before ./nn/module.h mean a ddl header included the project's file.
  local stolen
  stolen=$({ grep -E '^\.\.+ (\./)?(nn/module|data/dataset)\.h$' "$out/includes.txt" || true; } | sed 's/^\.* //' | sort -u | tr '\n' ' ')
  [ -z "$stolen" ] || fail "a ddl header includes the project's own $stolen"
  grep -qE '^\. (\./)?(nn/module|data/dataset)\.h$' "$out/includes.txt" ||
    fail "the project's own nn/module.h and data/dataset.h were not included: the check is wrong"
  [ $rc -eq 0 ] || { cat "$out/build.log"; fail "the user project did not build against the install"; }
  "$out/user_project" || fail "the user project's run failed"
}

run_pair() {  # $1 program, $2 label: two ranks by hand, rendezvous through a fresh file store
  local store="$tmp/store.$2"
  mkdir -p "$store"
  RANK=0 WORLD_SIZE=2 timeout 120 "$1" "file://$store" > "$tmp/$2.rank0" 2>&1 &
  local p0=$!
  pids+=("$p0")
  RANK=1 WORLD_SIZE=2 timeout 120 "$1" "file://$store" > "$tmp/$2.rank1" 2>&1 || { cat "$tmp/$2.rank1"; fail "$2: rank 1 failed"; }
  wait "$p0" || { cat "$tmp/$2.rank0"; fail "$2: rank 0 failed"; }
  grep -q "rank 0/2: all_reduce sum 3 ok" "$tmp/$2.rank0" && grep -q "rank 1/2: all_reduce sum 3 ok" "$tmp/$2.rank1" ||
    fail "$2: the ranks did not both report the sum 3"
  cat "$tmp/$2.rank0" "$tmp/$2.rank1"
}

build_pkg_config() {  # $1 prefix, $2 output folder: plain g++ with pkg-config's flags
  local p=$1 out=$2
  step "pkg-config + g++ against $p"
  mkdir -p "$out"
  export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
  for prog in train_tiny dist_allreduce; do
    g++ $(pkg-config --cflags ddl) "$CONSUMER_SRC/$prog.cpp" -o "$out/$prog" $(pkg-config --libs ddl) \
      -Wl,-rpath,"$(pkg-config --variable=libdir ddl)" || fail "g++ with pkg-config's flags could not build $prog"
    uses_prefix_lib "$out/$prog" "$p"
  done
  "$out/train_tiny" || fail "train_tiny (pkg-config) failed"
  run_pair "$out/dist_allreduce" "pkgconfig.$(basename "$out")"
}

build_cmake() {  # $1 prefix, $2 build folder: find_package(ddl) through CMAKE_PREFIX_PATH
  local p=$1 out=$2
  step "CMake find_package(ddl) against $p"
  cmake -S "$CONSUMER_SRC" -B "$out" -G Ninja -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release > "$out.log" 2>&1 ||
    { cat "$out.log"; fail "cmake could not configure against $p"; }
  cmake --build "$out" -j 2 > "$out.build.log" 2>&1 || { cat "$out.build.log"; fail "cmake --build failed"; }
  grep -q -- '-std=\(c\|gnu\)++20' "$out/build.ninja" || fail "ddl::ddl did not bring C++20 to the CMake build"
  for prog in train_tiny dist_allreduce; do uses_prefix_lib "$out/$prog" "$p"; done
  "$out/train_tiny" || fail "train_tiny (CMake) failed"
  # The distributed program under the installed launcher: ddlrun serves the store.
  timeout 120 "$p/$bindir/ddlrun" --nproc 2 --all-ranks --master-port 0 "$out/dist_allreduce" > "$out.ddlrun" 2>&1 ||
    { cat "$out.ddlrun"; fail "ddlrun --nproc 2 dist_allreduce (CMake) failed"; }
  grep -q "rank 0/2: all_reduce sum 3 ok" "$out.ddlrun" && grep -q "rank 1/2: all_reduce sum 3 ok" "$out.ddlrun" ||
    { cat "$out.ddlrun"; fail "under ddlrun the ranks did not both report the sum 3"; }
  cat "$out.ddlrun"
}

build_meson() {  # $1 prefix, $2 build folder: dependency('ddl') through PKG_CONFIG_PATH
  local p=$1 out=$2
  step "meson dependency('ddl') against $p"
  PKG_CONFIG_PATH="$p/$libdir/pkgconfig" meson setup "$out" "$CONSUMER_SRC" > "$out.log" 2>&1 ||
    { cat "$out.log"; fail "meson setup could not find ddl in $p"; }
  ninja -C "$out" -j 2 > "$out.build.log" 2>&1 || { cat "$out.build.log"; fail "the meson build failed"; }
  for prog in train_tiny dist_allreduce; do uses_prefix_lib "$out/$prog" "$p"; done
  "$out/train_tiny" || fail "train_tiny (meson) failed"
  run_pair "$out/dist_allreduce" meson
}

# The installed train_cifar on 2 ranks under the installed ddlrun, with the given flags;
# tiny synthetic data and the MLP, the final weights saved to $1.safetensors.
train_pair() {  # $1 output stem, then train_cifar flags
  local p=$root out=$1
  shift
  timeout 300 "$p/$bindir/ddlrun" --nproc 2 --master-port 0 "$p/$bindir/train_cifar" --dataset synthetic \
    --model mlp --train-samples 128 --test-samples 64 --batch-size 16 --epochs 2 --threads 1 --no-progress \
    --save "$out.safetensors" "$@" > "$out.log" 2>&1
}

student_plugin() {  # a student's strategy built outside the tree, loaded by the installed programs
  local p=$1 out=$2
  step "a student's strategy (student_tree.cpp) as a plugin, with pkg-config and with CMake"
  mkdir -p "$out"
  export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
  g++ $(pkg-config --cflags ddl) -Wall -Wextra -Werror -shared -fPIC "$CONSUMER_SRC/student_tree.cpp" \
    -o "$out/libstudent_tree.so" $(pkg-config --libs ddl) -Wl,-rpath,"$(pkg-config --variable=libdir ddl)" ||
    fail "g++ with pkg-config's flags could not build the plugin student_tree.cpp"
  uses_prefix_lib "$out/libstudent_tree.so" "$p"
  [ -f "$tmp/cmake/libstudent_tree.so" ] || fail "CMake did not build the plugin (add_library MODULE)"
  "$p/$bindir/train_cifar" --plugin "$tmp/cmake/libstudent_tree.so" --help > "$out/help.txt" ||
    fail "train_cifar --plugin (the CMake plugin) --help failed"
  grep -q 'tree: binomial-tree all-reduce' "$out/help.txt" || fail "train_cifar --help does not list the plugin's tree"

  step "train_cifar --plugin ... --sync tree on 2 ranks ends on allreduce's weights"
  train_pair "$out/allreduce" --sync allreduce || { cat "$out/allreduce.log"; fail "--sync allreduce failed"; }
  train_pair "$out/tree" --plugin "$out/libstudent_tree.so" --sync tree ||
    { cat "$out/tree.log"; fail "--plugin libstudent_tree.so --sync tree failed"; }
  grep -q 'sync tree' "$out/tree.log" || { cat "$out/tree.log"; fail "the run's header does not say sync tree"; }
  # Two ranks: each gradient sum is a + b in either order, so the runs agree bit for bit.
  cmp "$out/allreduce.safetensors" "$out/tree.safetensors" ||
    fail "the tree plugin's final weights differ from allreduce's"
  grep -E 'epoch 2' "$out/tree.log" | head -2 || true

  step "sync_study --plugin ... --strategies allreduce tree"
  timeout 300 "$p/$bindir/sync_study" --plugin "$out/libstudent_tree.so" --nproc 2 --strategies allreduce tree \
    --train-samples 128 --test-samples 64 --batch-size 16 --out "$out/study" > "$out/study.txt" 2>&1 ||
    { cat "$out/study.txt" "$out"/study/*.log; fail "sync_study with the plugin failed"; }
  local losses
  losses=$(tail -n +2 "$out/study/study.csv" | cut -d, -f1,8 | sort)
  [ "$(echo "$losses" | cut -d, -f1 | tr '\n' ' ')" = "allreduce tree " ] &&
    [ "$(echo "$losses" | cut -d, -f2 | sort -u | wc -l)" = 1 ] ||
    fail "study.csv: allreduce and tree should both be there with one final loss: $losses"
  grep -q 'average gradients every step (allreduce, tree)' "$out/study/study.md" ||
    fail "study.md does not count the plugin's tree among the exact strategies"
  "$p/$bindir/sync_study" --plugin "$out/libstudent_tree.so" --list-strategies | grep -qP '^tree\texact\t' ||
    fail "sync_study --list-strategies does not list tree as exact"

  step "a plugin others could change is refused"
  cp "$out/libstudent_tree.so" "$out/libshared.so"
  chmod g+w "$out/libshared.so"
  local rc=0
  "$p/$bindir/train_cifar" --plugin "$out/libshared.so" --sync tree --dataset synthetic > "$out/refused.txt" 2>&1 || rc=$?
  [ $rc -eq 2 ] && grep -q "refusing '$out/libshared.so'" "$out/refused.txt" ||
    { cat "$out/refused.txt"; fail "train_cifar loaded a group-writable plugin (exit $rc)"; }
}

grade_labs() {  # the installed grader on the installed lab skeleton and on the student's tree
  local p=$1 out=$2 rc=0
  step "ddl-grade on the installed lab p2p skeleton (zero, naming the function) and on student_tree (full marks)"
  mkdir -p "$out"
  export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
  [ -f "$p/share/ddl/labs/p2p/README.md" ] && [ -f "$p/share/ddl/labs/ring/ring_skeleton.cpp" ] &&
    [ -f "$p/share/ddl/labs/fault/fault_skeleton.cpp" ] && [ ! -e "$p/share/ddl/labs/p2p/solution.cpp" ] || fail "share/ddl/labs: handouts and skeletons only, no reference"
  g++ $(pkg-config --cflags ddl) -Werror -shared -fPIC "$p/share/ddl/labs/p2p/p2p_skeleton.cpp" \
    -o "$out/libp2p.so" $(pkg-config --libs ddl) -Wl,-rpath,"$(pkg-config --variable=libdir ddl)" ||
    fail "the installed p2p skeleton does not build against the install"
  "$p/$bindir/ddl-grade" --lab p2p-gather-scatter --plugin "$out/libp2p.so" --ranks 2 > "$out/skeleton.txt" 2>&1 ||
    rc=$?
  [ $rc -eq 1 ] && grep -q "rank 0 failed: gather_scatter_sum: not implemented" "$out/skeleton.txt" ||
    { cat "$out/skeleton.txt"; fail "the installed grader did not fail the skeleton as the handout says (exit $rc)"; }
  # Two ranks: the tree sends M and receives M on each rank, as part 2b's formula says.
  "$p/$bindir/ddl-grade" --lab p2p-allreduce --plugin "$tmp/student/libstudent_tree.so" --strategy tree --ranks 2 \
    --json "$out/results.json" > "$out/tree.txt" 2>&1 || { cat "$out/tree.txt"; fail "ddl-grade failed the tree"; }
  grep -q '"score": 5.0' "$out/results.json" || fail "results.json lacks the tree's score 5"
}

check_tree "$root"
check_headers "$root"
user_project "$root"
build_pkg_config "$root" "$tmp/pc"
build_cmake "$root" "$tmp/cmake"
build_meson "$root" "$tmp/meson"
student_plugin "$root" "$tmp/student"
grade_labs "$root" "$tmp/grade"

# Relocation: the whole prefix moves; the builds above must not be needed, and new ones
# must find the new place through the same package files.
moved="$tmp/moved/elsewhere/ddl"
mkdir -p "$(dirname "$moved")"
mv "$root" "$moved"
step "prefix moved to $moved"
check_tree "$moved"
build_pkg_config "$moved" "$tmp/pc-moved"
build_cmake "$moved" "$tmp/cmake-moved"
echo "install: ok (pkg-config, CMake and meson builds against the install, before and after moving it; a student's plugin strategy trains as allreduce; the installed grader grades the installed lab skeleton)"
