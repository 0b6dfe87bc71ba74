/* fuzz/onnx_mutator — a structure-aware libFuzzer mutator for ONNX models: decodes the
 * ModelProto, changes what the executor depends on (attribute values, initializer dims and
 * data, wiring, op types, declared input dims, opset) and re-encodes; byte-level otherwise. */
#ifndef QR_FUZZ_ONNX_MUTATOR_H
#define QR_FUZZ_ONNX_MUTATOR_H

/* The mutator's name: libFuzzer's hook unless the includer names it (fuzz_main.c: one binary
 * for every target, whose hook calls this one for onnx_run only). */
#ifndef QR_FUZZ_ONNX_MUTATOR
#define QR_FUZZ_ONNX_MUTATOR LLVMFuzzerCustomMutator
#endif

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t QR_FUZZ_ONNX_MUTATOR(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Values that sit on boundaries: small dims and axes, sign and width limits. */
static const int64_t qr__hd_ints[] = {
    0, 1, -1, 2, 3, -2, 4, 5, 7, 8, 9, 16, 17, 255, 256, 65535, 65536, (int64_t)1 << 31, -((int64_t)1 << 31),
    (int64_t)1 << 40, INT64_MAX, INT64_MIN, INT32_MAX, -3, 6,
};
static const float qr__hd_floats[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-38f, 1e38f, 1e-45f, 3.4e38f, 2.0f };

static size_t qr__hd_pick(uint64_t *r, size_t n) { return n ? (size_t)(qr_rng_next(r) % n) : 0; }

static int64_t qr__hd_int(uint64_t *r) {
    return qr__hd_pick(r, 3) ? (int64_t)qr__hd_pick(r, 10) - 1 : qr__hd_ints[qr__hd_pick(r, QR_ARRAY_LEN(qr__hd_ints))];
}

static float qr__hd_float(uint64_t *r) {
    switch (qr__hd_pick(r, 6)) {
    case 0: return NAN;
    case 1: return qr__hd_pick(r, 2) ? INFINITY : -INFINITY;
    default: return qr__hd_floats[qr__hd_pick(r, QR_ARRAY_LEN(qr__hd_floats))];
    }
}

/* Replaces a string owned by an unpacked message (protobuf-c frees it with free()). */
static void qr__hd_set_str(char **dst, const char *s) {
    char *d = strdup(s);
    if (!d) return;
    free(*dst);
    *dst = d;
}

/* A name some value of g has (node output, initializer, graph input), or "" (omitted). */
static const char *qr__hd_any_name(const Onnx__GraphProto *g, uint64_t *r) {
    size_t n_out = 0;
    for (size_t i = 0; i < g->n_node; i++) n_out += g->node[i]->n_output;
    size_t k = qr__hd_pick(r, n_out + g->n_initializer + g->n_input + 1);
    for (size_t i = 0; i < g->n_node; i++) {
        if (k < g->node[i]->n_output) return g->node[i]->output[k];
        k -= g->node[i]->n_output;
    }
    if (k < g->n_initializer) return g->initializer[k]->name ? g->initializer[k]->name : "";
    k -= g->n_initializer;
    if (k < g->n_input) return g->input[k]->name ? g->input[k]->name : "";
    return "";
}

/* One random structural change; false when the model has nothing of the chosen kind. */
static bool qr__hd_mutate_model(Onnx__ModelProto *m, uint64_t *r) {
    Onnx__GraphProto *g = m->graph;
    if (!g) return false;
    Onnx__NodeProto *node = g->n_node ? g->node[qr__hd_pick(r, g->n_node)] : NULL;
    switch (qr__hd_pick(r, 9)) {
    case 0: case 1: {                                  /* an attribute's value */
        if (!node || !node->n_attribute) return false;
        Onnx__AttributeProto *a = node->attribute[qr__hd_pick(r, node->n_attribute)];
        if (a->n_ints) a->ints[qr__hd_pick(r, a->n_ints)] = qr__hd_int(r);
        else if (a->n_floats) a->floats[qr__hd_pick(r, a->n_floats)] = qr__hd_float(r);
        else if (a->has_i || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) { a->has_i = 1; a->i = qr__hd_int(r); }
        else if (a->has_f || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) { a->has_f = 1; a->f = qr__hd_float(r); }
        else return false;
        return true;
    }
    case 2: {                                          /* an initializer's dims */
        if (!g->n_initializer) return false;
        Onnx__TensorProto *t = g->initializer[qr__hd_pick(r, g->n_initializer)];
        if (!t->n_dims) return false;
        t->dims[qr__hd_pick(r, t->n_dims)] = qr__hd_int(r);
        return true;
    }
    case 3: {                                          /* an initializer's data */
        if (!g->n_initializer) return false;
        Onnx__TensorProto *t = g->initializer[qr__hd_pick(r, g->n_initializer)];
        if (t->has_raw_data && t->raw_data.len >= 4 && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
            float f = qr__hd_float(r);
            memcpy(t->raw_data.data + 4 * qr__hd_pick(r, t->raw_data.len / 4), &f, 4);
        } else if (t->has_raw_data && t->raw_data.len >= 8 && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
            int64_t v = qr__hd_int(r);
            memcpy(t->raw_data.data + 8 * qr__hd_pick(r, t->raw_data.len / 8), &v, 8);
        } else if (t->has_raw_data && t->raw_data.len) {
            t->raw_data.data[qr__hd_pick(r, t->raw_data.len)] = (uint8_t)qr_rng_next(r);
        } else if (t->n_float_data) t->float_data[qr__hd_pick(r, t->n_float_data)] = qr__hd_float(r);
        else if (t->n_int64_data) t->int64_data[qr__hd_pick(r, t->n_int64_data)] = qr__hd_int(r);
        else if (t->n_int32_data) t->int32_data[qr__hd_pick(r, t->n_int32_data)] = (int32_t)qr__hd_int(r);
        else return false;
        return true;
    }
    case 4: {                                          /* rewire a node input (or omit it) */
        if (!node || !node->n_input) return false;
        qr__hd_set_str(&node->input[qr__hd_pick(r, node->n_input)], qr__hd_any_name(g, r));
        return true;
    }
    case 5: {                                          /* another operator, same wiring */
        if (!node) return false;
        int t = (int)qr__hd_pick(r, QR_ARRAY_LEN(qr__op_tables));
        const QrOpDef *d = &qr__op_tables[t].defs[qr__hd_pick(r, (size_t)qr__op_tables[t].count)];
        if (!d->op_type) return false;
        qr__hd_set_str(&node->op_type, d->op_type);
        qr__hd_set_str(&node->domain, d->domain);
        return true;
    }
    case 6: {                                          /* a declared graph input dim */
        if (!g->n_input) return false;
        Onnx__ValueInfoProto *vi = g->input[qr__hd_pick(r, g->n_input)];
        if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type ||
            !vi->type->tensor_type->shape || !vi->type->tensor_type->shape->n_dim)
            return false;
        Onnx__TensorShapeProto *s = vi->type->tensor_type->shape;
        Onnx__TensorShapeProto__Dimension *d = s->dim[qr__hd_pick(r, s->n_dim)];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) return false;  /* keeps the union simple */
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = (int64_t)qr__hd_pick(r, 9);
        return true;
    }
    case 7: {                                          /* rename a node output */
        if (!node || !node->n_output) return false;
        qr__hd_set_str(&node->output[qr__hd_pick(r, node->n_output)], qr__hd_any_name(g, r));
        return true;
    }
    default: {                                         /* the default-domain opset */
        static const int64_t opsets[] = { 1, 6, 7, 9, 10, 11, 12, 13, 17, 18, 19, 21, 23 };
        for (size_t i = 0; i < m->n_opset_import; i++)
            if (!m->opset_import[i]->domain || !m->opset_import[i]->domain[0]) {
                m->opset_import[i]->version = opsets[qr__hd_pick(r, QR_ARRAY_LEN(opsets))];
                return true;
            }
        return false;
    }
    }
}

/* The mutation (libFuzzer's hook, or called by it): 1 in 4 byte-level (LLVMFuzzerMutate), else 1-3 structural changes of a
 * decodable model; falls back to byte-level when decoding fails or the result is too big. */
size_t QR_FUZZ_ONNX_MUTATOR(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    uint64_t r = seed;
    if (qr__hd_pick(&r, 4) == 0) return LLVMFuzzerMutate(data, size, max_size);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m) return LLVMFuzzerMutate(data, size, max_size);
    bool changed = false;
    for (int i = 0, n = 1 + (int)qr__hd_pick(&r, 3); i < n; i++) changed |= qr__hd_mutate_model(m, &r);
    size_t len = onnx__model_proto__get_packed_size(m);
    if (!changed || len > max_size) {
        onnx__model_proto__free_unpacked(m, NULL);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    onnx__model_proto__pack(m, data);
    onnx__model_proto__free_unpacked(m, NULL);
    return len;
}

#endif
