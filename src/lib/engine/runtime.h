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

/* F-VLLM-04: vLLM's non-torch memory per GPU: CUDA context, cuBLAS/cuDNN handles and the
 * kernels loaded lazily during the profile run. 0.35 GiB measured on an RTX 3090 with
 * Llama-3.1-8B (measured-public.jsonl vllm-10517-llama31-8b-3090-20k, non_torch_memory=0.35GiB;
 * one row: a calibrated guess, the assumptions say so). */
#define VF_RT_VLLM_NON_TORCH_BYTES ((uint64_t)(0.35 * (1ULL << 30)))
/* F-VLLM-04: with tensor or pipeline parallelism, NCCL communicators and the custom all-reduce
 * IPC buffers (assumed: NCCL's default 4 MiB buffers x channels x peers plus custom
 * all-reduce's 2 x 8 MiB; no measured row separates it). */
#define VF_RT_VLLM_NCCL_BYTES (512ULL << 20)
/* F-VLLM-05: device memory per captured CUDA graph per decoder layer (vLLM V1 piecewise and
 * full graphs share one pool; 128 KiB per layer per graph reproduces the V1 log "Capturing
 * CUDA graphs ... 19 + 11 graphs ... took 0.11 GiB", vllm-winbuild4-cudagraph-pool, for a
 * model of about 30 layers). */
#define VF_RT_VLLM_GRAPH_BYTES_PER_LAYER (128ULL << 10)

/* The driver's reservation of a card not in the catalog: 438 MiB, nvidia-smi's total less
 * CUDA's measured on an H100 SXM (81559 - 81121 MiB, docs/CATALOG.md); GDDR cards reserve
 * less, so this understates what is free there. */
#define VF_RT_DRIVER_RESERVE_BYTES (438ULL << 20)

#endif /* VRAMFIT_RUNTIME_H */
