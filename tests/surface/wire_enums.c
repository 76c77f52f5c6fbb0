/* wire_enums.c - the stable tier's constants for the schema's enums
 * (attr.h: CHAKRA_COMP_NODE, CHAKRA_ALL_REDUCE, ...) are the values
 * protobuf-c generates from proto/et_def.proto, one constant for every
 * value the schema has, and the name functions name them. */
#include <stdio.h>
#include <string.h>

#include "chakra/attr.h"

#define SAME(ours, generated) _Static_assert((int)(ours) == (int)(generated), #ours " is not " #generated)
#define NODE(x) SAME(CHAKRA_##x, CHAKRA_PROTO_MSG__NODE_TYPE__##x)
#define COMM(x) SAME(CHAKRA_##x, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__##x)
NODE(INVALID_NODE);
NODE(METADATA_NODE);
NODE(MEM_LOAD_NODE);
NODE(MEM_STORE_NODE);
NODE(COMP_NODE);
NODE(COMM_SEND_NODE);
NODE(COMM_RECV_NODE);
NODE(COMM_COLL_NODE);
COMM(ALL_REDUCE);
COMM(REDUCE);
COMM(ALL_GATHER);
COMM(GATHER);
COMM(SCATTER);
COMM(BROADCAST);
COMM(ALL_TO_ALL);
COMM(REDUCE_SCATTER);
COMM(REDUCE_SCATTER_BLOCK);
COMM(BARRIER);

/* Every value of the schema's enum has a constant above (the counts) and
 * the library names it as the schema does. */
static int check(const ProtobufCEnumDescriptor *d, unsigned constants, const char *(*name)(int)) {
  int bad = 0;
  if (d->n_values != constants) {
    printf("%s has %u values, attr.h %u constants\n", d->name, d->n_values, constants);
    bad = 1;
  }
  for (unsigned i = 0; i < d->n_values; i++) {
    const char *ours = name(d->values[i].value);
    if (!ours || strcmp(ours, d->values[i].name)) {
      printf("%s value %d: the library says %s, the schema %s\n", d->name, d->values[i].value,
             ours ? ours : "(null)", d->values[i].name);
      bad = 1;
    }
  }
  return bad;
}

static const char *comm_name(int v) { return chakra_comm_type_name(v); }

int main(void) {
  int bad = check(&chakra_proto_msg__node_type__descriptor, 8, chakra_node_type_name);
  bad |= check(&chakra_proto_msg__collective_comm_type__descriptor, 10, comm_name);
  if (!bad) printf("attr.h's 8 node types and 10 collective types are the schema's\n");
  return bad;
}
