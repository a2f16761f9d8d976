import { listNodesRoute } from '~/master/nodes-api'

export const GET = listNodesRoute
