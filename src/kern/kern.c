/* kern — dispatch. See kern.h. */

static bool qr__kern_ready;

static void qr_kern_init(void) {
    if (qr__kern_ready) return;
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    qr_kern.isa = QR_ISA_REF;
    qr_kern.f32_gemm = qr_f32_gemm__ref;
    qr_kern.f32_dwconv2d = qr_f32_dwconv2d__ref;
    const char *force = getenv("QR_ISA");
    if (force && strcmp(force, "ref") == 0) qr_kern.isa = QR_ISA_REF;
    qr__kern_ready = true;
}

static QrIsa qr_kern_isa(void) { qr_kern_init(); return qr_kern.isa; }
