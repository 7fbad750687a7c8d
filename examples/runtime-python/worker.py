#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A worker that serves requests, with USDT probes declared at run time.

Each request fires request-start(path, id) and request-done(path, id,
nanoseconds). With no tracer attached each fire() is a memoryview read;
worker.bt shows them with bpftrace (README.md).

    worker.py [REQUESTS]     (default: forever)
"""

import os
import random
import sys
import time

import usdtkit


def main():
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    with usdtkit.Provider("worker") as provider:
        start = provider.add_probe("request-start", "string", "int")
        done = provider.add_probe("request-done", "string", "int", "int64")
        provider.load()
        print(f"worker {os.getpid()}: serving", flush=True)
        n = 0
        while requests == 0 or n < requests:
            n += 1
            path = random.choice(["/", "/index.html", "/api/users"])
            began = time.monotonic_ns()
            start.fire(path, n)
            time.sleep(random.uniform(0.05, 0.15))  # the work
            done.fire(path, n, time.monotonic_ns() - began)


if __name__ == "__main__":
    main()
