#!/bin/sh
# regen.sh NETFLIX_GIT_DIR: rebuilds netflix.txt, the limit trajectories of
# Netflix concurrency-limits' AIMDLimit and Gradient2Limit (commit 78a74b9)
# on trace.txt. Needs a JDK. slf4j is stubbed (the classes only log).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:?usage: regen.sh path/to/concurrency-limits/.git}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$src" archive 78a74b9 concurrency-limits-core/src/main/java | tar -x -C "$tmp"
core=$tmp/concurrency-limits-core/src/main/java/com/netflix/concurrency/limits
mkdir -p "$tmp/stub/org/slf4j"
cat >"$tmp/stub/org/slf4j/Logger.java" <<'J'
package org.slf4j;
public interface Logger {
    default boolean isDebugEnabled() { return false; }
    default void debug(String f, Object... a) {}
    default void warn(String f, Object... a) {}
    default void info(String f, Object... a) {}
}
J
cat >"$tmp/stub/org/slf4j/LoggerFactory.java" <<'J'
package org.slf4j;
public final class LoggerFactory { public static Logger getLogger(Class<?> c) { return new Logger() {}; } }
J
javac -d "$tmp/out" "$tmp"/stub/org/slf4j/*.java "$core"/Limit.java "$core"/MetricIds.java "$core"/MetricRegistry.java \
  "$core"/internal/EmptyMetricRegistry.java "$core"/internal/Preconditions.java "$core"/limit/AbstractLimit.java \
  "$core"/limit/AIMDLimit.java "$core"/limit/Gradient2Limit.java "$core"/limit/measurement/*.java "$here/NetflixTrace.java"
java -cp "$tmp/out" NetflixTrace "$here/trace.txt" >"$here/netflix.txt"
