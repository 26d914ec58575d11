# bench/bench.mk: `make bench` builds the GPU benchmarks (cuBLAS/CUB baselines
# live only here; the library stays C) and runs them; needs a GPU.
BENCH_NVCCFLAGS ?= -O3 -std=c++17 -arch=sm_90 -Iruntime -Idriver -Itemplates -Idb -I$(CUDA_HOME)/include
BENCH_SRC  := $(wildcard bench/bench_*.c bench/bench_*.cu)
BENCH_BIN  := $(patsubst bench/%,$(BUILD)/bench/%,$(basename $(BENCH_SRC)))

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(STATIC) -L$(CUDA_LIB) -lcublas -lcudart $(LDLIBS)
$(BUILD)/bench/%: bench/%.cu $(STATIC)
	@mkdir -p $(dir $@)
	$(NVCC) $(BENCH_NVCCFLAGS) -o $@ $< $(STATIC) -L$(CUDA_LIB) -Xlinker -rpath,$(CUDA_LIB) -lcublasLt -lcublas -lcudart -lnvrtc $(SQLITE_LIBS) -ldl -lpthread -lm

bench-build: $(BENCH_BIN)
bench: all bench-build
	BUILD=$(BUILD) bash bench/run.sh all
.PHONY: bench bench-build
