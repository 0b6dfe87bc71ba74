/* onnx — decoding ModelProto / TensorProto with protobuf-c and converting them to
 * the IR: initializers in every encoding, external data, attributes, opsets.
 * Untrusted input: every length and dim is checked before anything is allocated. */
#ifndef QR_ONNX_H
#define QR_ONNX_H

/* Largest .onnx protobuf we read (protobuf itself cannot exceed 2 GiB; weights
 * beyond that live in external data files, which have no such limit). */
#define QR_ONNX_MAX_PROTO ((size_t)2 << 30)

/* Reads a model into the IR, its nodes not yet bound to operators (QrNode.def NULL: run/'s
 * qr_run_load reads and binds, which is what every command wants). On success *out owns
 * everything (qr_graph_free). Messages name the file and the tensor/node at fault. */
static QrStatus qr_onnx_read(const char *path, QrGraph **out);
#ifdef QR_TESTING
/* Reads a model from a buffer the caller keeps (tests, fuzz; qr_run_load_buffer binds). */
QR_TESTAPI QrStatus qr_onnx_read_buffer(const char *path_for_messages, const char *dir,
                                        const unsigned char *buf, size_t len, QrGraph **out);
#endif
/* TensorProto .pb files (the ONNX test-data format). */
static QrStatus qr_pb_read(const char *path, QrTensor *out, char *name, size_t name_len);
/* The same, and the sha256 of the file's bytes as read (sha: NULL, or QR_SHA256_LEN bytes). */
static QrStatus qr_pb_read_sha(const char *path, QrTensor *out, char *name, size_t name_len, uint8_t *sha);
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_pb_write(const char *path, const QrTensor *t, const char *name);
#endif

#endif
