/** The push benches' floors send what the service pushes: an event frame of its size and shape for write `w` committed `at`. */
export function pushFrameText(w: number, at: string): string {
  const rec = JSON.stringify({
    id: '01a227b4-1b91-7143-bff5-47298261c390',
    type: 'push',
    value: { w },
    opts: { title: '', comment: '' },
    ext: { ct: at, lwt: at },
  })
  return `["event",{"subscription":"s","class":"modelevents","event":"data_changed","seq":${w},"data":{"class":"extobj","operation":1,"id":"01a227b4-1b91-7143-bff5-47298261c390","old":${rec},"new":${rec},"initiator_type":"user","initiator_id":"01a227b4-1926-741f-8d27-19518da966f4"}}]`
}

/** What a subscribe is answered with. */
export const SUBSCRIBED = '["subscribe",{"id":"s","expires":3600}]'
