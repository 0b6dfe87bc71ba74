/* ops/nn — convolution, matrix products, pooling and normalization layers. */

static const QrOpDef qr_ops_nn[] = {
    { NULL, NULL, 0, 0, 0, 0, NULL, NULL, 0 },   /* placeholder until the first op lands */
};
