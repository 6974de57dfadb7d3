module leasehold.dev/bench/openloop

go 1.21
