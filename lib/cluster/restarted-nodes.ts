/**
 * A node that crashed and came back under the same NODE_ID before the heartbeat timeout (8 s) is never
 * seen as disconnected, so Moleculer keeps the calls this node had sent to its dead predecessor pending
 * until the request timeout (30 s): every client request routed there hangs that long. The new instance
 * announces itself with a new instanceID; from then on those calls can never be answered, so they are
 * rejected at once (as Moleculer does on a disconnect) and the caller's retry reaches the live node.
 * Found by the two-node kill test (test/e2e/cluster-kill.test.ts). A Moleculer middleware; no state but
 * the last instance seen per node.
 */
import type { ServiceBroker } from 'moleculer';

interface NodeLike {
  id: string;
  instanceID?: string;
  local?: boolean;
}
interface TransitLike {
  removePendingRequestByNodeID(nodeID: string): void;
}

export function restartedNodes(): Record<string, unknown> {
  const seen = new Map<string, string>();
  return {
    name: 'RestartedNodes',
    created(broker: ServiceBroker) {
      const remember = ({ node }: { node: NodeLike }) => {
        if (node.local || !node.instanceID) return;
        const before = seen.get(node.id);
        seen.set(node.id, node.instanceID);
        const transit = (broker as unknown as { transit?: TransitLike }).transit;
        if (before && before !== node.instanceID && transit) {
          broker.logger.warn(`node '${node.id}' restarted (new instance): its predecessor's pending calls are rejected`);
          transit.removePendingRequestByNodeID(node.id);
        }
      };
      broker.localBus.on('$node.connected', remember);
      broker.localBus.on('$node.updated', remember);
      broker.localBus.on('$node.disconnected', ({ node }: { node: NodeLike }) => {
        seen.delete(node.id);
      });
    },
  };
}
