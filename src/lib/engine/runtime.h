/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime.h - the memory the runtimes under every engine take that no model explains: the
 * CUDA context, cuBLAS workspaces, allocator slack, engine reserves. One definition each, with
 * its formula ID and its source; the engines and the solver use these names, never a bare
 * number (issue 15: the 400 MiB context was defined four times).
 */
#ifndef VRAMFIT_RUNTIME_H
#define VRAMFIT_RUNTIME_H

/* F-TRAIN-09, F-HF-11, F-DIF-08: the CUDA context with lazy module loading (the default since
 * CUDA 11.7), "around 400MB" (pytorch/pytorch#109888; 287 MB measured in pytorch/pytorch#86509). */
#define VF_RT_CUDA_CONTEXT_BYTES (400ULL << 20)

/* F-OOM-13c: the most a PyTorch process takes outside its allocator with no other process
 * on the card: the CUDA context with every kernel loaded eagerly (before CUDA 11.7 or with
 * CUDA_MODULE_LOADING=EAGER: "took >1000MB", pytorch/pytorch#107667) plus cuDNN's handle
 * ("750M", pytorch/pytorch#12873; "1GB + 750M + others = 2GB+" in all there). */
#define VF_RT_CUDA_CONTEXT_EAGER_BYTES (2ULL << 30)

/* F-TRAIN-09, F-HF-11: the cuBLASLt workspace, 32 MiB on Hopper (PyTorch PR #120925), plus the
 * cuBLAS block of 8,519,680 B seen on the first matmul (research A6). */
#define VF_RT_CUBLAS_WORKSPACE_BYTES ((32ULL << 20) + 8519680ULL)

/* F-TRAIN-09, F-HF-11: allocator slack on activations, logits and other transients, Megatron-LM's
 * overhead_factor 1.05 (megatron/training/theoretical_memory_usage.py; research A7). */
#define VF_RT_ALLOC_SLACK_PCT 5

/* F-GEN-04: the generic estimate's CUDA context + cuBLAS workspace + allocator slack per GPU
 * (assumed: vLLM logs show 0.35-1.79 GiB of non-torch memory; PyTorch on CUDA 12 with lazy
 * module loading creates a context of a few hundred MiB). */
#define VF_RT_GENERIC_OVERHEAD_BYTES (768ULL << 20)

/* F-DIF-08: ComfyUI's EXTRA_RESERVED_VRAM on Linux (comfy/model_management.py; 600 MiB on
 * Windows, --reserve-vram replaces it), kept free on top of every phase's need. */
#define VF_RT_COMFY_RESERVE_BYTES (400ULL << 20)
/* F-DIF-05: ComfyUI's minimum_inference_memory() less the reserve: (1024^3) x 0.8 bytes. */
#define VF_RT_COMFY_MIN_INFERENCE_BYTES 858993459ULL

/* F-VLLM-04: vLLM's non-torch memory per GPU, from its parts (issue 20).
 * Kernels and workspaces: cuBLAS/cuBLASLt workspaces and the kernel modules loaded lazily
 * during the profile run, the increase over the start-up snapshot: 0.16 GiB measured on an
 * H100 (measured-public.jsonl vllm-pr12126, "non_torch_memory takes 0.16GiB", TP 1, eager;
 * one row: the assumptions say so). Low end: the cuBLAS workspaces alone
 * (VF_RT_CUBLAS_WORKSPACE_BYTES); high end: twice the measured (the kernels loaded depend on
 * the attention backend and the quantization). */
#define VF_RT_VLLM_KERNELS_BYTES ((uint64_t)(0.16 * (1ULL << 30)))
/* F-VLLM-04: the CUDA context where the release counts it as non-torch memory (V0 before
 * 0.6.5, V1 before 0.10): vllm-10517 measured 0.35 GiB of non-torch memory on an RTX 3090
 * (0.6.4 accounting, which counts the context), less the kernels and workspaces above:
 * 0.19 GiB (fitted on that one row: the assumptions say so). High end: PyTorch's "around
 * 400MB" context (VF_RT_CUDA_CONTEXT_BYTES). */
#define VF_RT_VLLM_CONTEXT_BYTES ((uint64_t)(0.19 * (1ULL << 30)))
/* F-VLLM-04: with tensor or pipeline parallelism, per GPU: two NCCL communicators (torch's
 * process group and vLLM's PyNcclCommunicator, vllm/distributed/parallel_state.py) of
 * NCCL_BUFFSIZE 4 MiB x 2 directions x 16 channels = 128 MiB each, and custom all-reduce's
 * 8 MiB buffers (custom_all_reduce.py max_size): 256 MiB assumed, 64-512 MiB as the range
 * (the channel count depends on the topology; no measured row separates it). */
#define VF_RT_VLLM_NCCL_BYTES    (256ULL << 20)
#define VF_RT_VLLM_NCCL_LO_BYTES (64ULL << 20)
#define VF_RT_VLLM_NCCL_HI_BYTES (512ULL << 20)
/* F-VLLM-05: device memory per captured CUDA graph per decoder layer (vLLM V1 piecewise and
 * full graphs share one pool; 128 KiB per layer per graph reproduces the V1 log "Graph
 * capturing finished ..., took 0.11 GiB" of vllm-winbuild4-cudagraph-pool for about 30 graphs
 * of a model of about 30 layers: fitted on that one row, whose model is not named; the V0 row
 * vllm-7553 measures 9x more per graph and layer at TP 4, see docs/FORMULAS.md accuracy). */
#define VF_RT_VLLM_GRAPH_BYTES_PER_LAYER (128ULL << 10)

/* The driver's reservation of a card not in the catalog: 438 MiB, nvidia-smi's total less
 * CUDA's measured on an H100 SXM (81559 - 81121 MiB, docs/CATALOG.md); GDDR cards reserve
 * less, so this understates what is free there. */
#define VF_RT_DRIVER_RESERVE_BYTES (438ULL << 20)

#endif /* VRAMFIT_RUNTIME_H */
