#pragma once
// The probe's only kernel, as PTX text written by hand, so gpupart-probe builds without nvcc (CI has no
// CUDA toolkit) and the driver compiles it for whatever GPU it runs on (cuModuleLoadData JITs PTX).
//
//   gpupart_probe_smid(u32* out, u64 spin_ns): thread 0 of each block reads %smid, spins until
//   %globaltimer has advanced spin_ns (or went backwards: the unsigned difference then exceeds spin_ns,
//   so the spin is bounded either way) and stores the SM id at out[blockIdx.x].
//
// The spin keeps each block on its SM long enough that the first wave of blocks lands on every allowed
// SM; the launcher asks for more than half an SM's shared memory, so an SM holds one block at a time.
namespace gpupart::probe {

inline constexpr const char kProbeKernelName[] = "gpupart_probe_smid";

inline constexpr const char kProbeKernelPtx[] = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry gpupart_probe_smid(
    .param .u64 param_out,
    .param .u64 param_spin_ns
)
{
    .reg .pred  %p<3>;
    .reg .b32   %r<4>;
    .reg .b64   %rd<8>;

    mov.u32             %r0, %tid.x;
    setp.ne.u32         %p0, %r0, 0;
    @%p0 bra            DONE;
    ld.param.u64        %rd0, [param_out];
    ld.param.u64        %rd1, [param_spin_ns];
    mov.u32             %r1, %smid;
    mov.u64             %rd2, %globaltimer;
SPIN:
    mov.u64             %rd3, %globaltimer;
    sub.u64             %rd4, %rd3, %rd2;
    setp.lt.u64         %p1, %rd4, %rd1;
    @%p1 bra            SPIN;
    cvta.to.global.u64  %rd5, %rd0;
    mov.u32             %r2, %ctaid.x;
    mul.wide.u32        %rd6, %r2, 4;
    add.u64             %rd7, %rd5, %rd6;
    st.global.u32       [%rd7], %r1;
DONE:
    ret;
}
)PTX";

}  // namespace gpupart::probe
