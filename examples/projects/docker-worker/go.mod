module example.com/docker-worker

go 1.19
