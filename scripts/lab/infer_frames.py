"""The paraphrase frames of the training generator (``lab.infer_training``), per slot (issue 35).

Written for the generator; none is taken from the hand-written evaluation dialogues.
"""

from __future__ import annotations

from lab.infer_vocabulary import phrases

# {S} subject, {P} its possessive (tagged S), {V} value, {X} old value, {A} aspect, {T} a time
# phrase, {s} {es} {be} {have} {was} {do} {ies} agreement with the subject. A frame starting
# with "!" ends a fact.
FRAMES: dict[str, list[str]] = {
    "home": phrases(
        """{S} {be} still in the same flat in {V}|{V} {have} been good to {M} since {T}|
the new place in {V} is great, says {S}|{S} {be} in {V} now, the house has a garden|
{S} call{s} {V} home now|
{S} {have} a house in {V} now|{S} {be} living out in {V} these days|{S} moved house to {V}|
{S} live{s} in {V}|{S} {be} living in {V} now|{S} moved to {V} {T}|{S} relocated to {V}|
{S} {have} settled in {V}|{S} {be} based in {V}|home for {M} is {V} these days|{S} bought a place
in {V}|{S} {be} renting a flat in {V}|{V} is home now for {S}|{S} finally moved into a house in {V}|
{S} just signed a lease in {V}|{S} {have} been in {V} since {T}|{S} moved from {X} to {V}|
{S} left {X} and moved to {V}|{S} packed up and went to {V}|{S} {be} in {V} now, loving it|
{S} {have} lived in {V} for years|work sent {M} to {V} for good|{S} ended up in {V} after all|
{P} new address is in {V}|{S} {be} back in {V} for good|{S} {have} just moved house, to {V}|
{S} rent{s} a room in {V}|{S} {be} staying in {V} permanently|{S} swapped {X} for {V}|
!{S} moved out of {X}|!{S} {have} left {X} for good|!{S} no longer live{s} in {X}|
!{S} sold the house in {X}"""
    ),
    "employer": phrases(
        """{S} {be} a {R} at {V}|{S} {be} a {R} with {V} these days|{S} work{s} in {R} at {V}|
{S} {have} worked at {V} for ages|{S} {be} still at {V}|{S} went back to {V}|{S} {be} doing
{R} work for {V} now|{S} got hired by {V}|{S} landed a job at {V}|
{S} work{s} at {V}|{S} work{s} for {V}|{S} joined {V} {T}|{S} started at {V} {T}|
{S} got a job at {V}|{S} {be} employed by {V}|{S} {have} been at {V} for three years|
{S} took a job with {V}|{S} {be} with {V} now|{S} signed with {V}|{V} hired {M} {T}|
{S} left {X} and joined {V}|{S} switched from {X} to {V}|{S} {be} now at {V}, not {X}|
{S} moved from {X} to {V} {T}|{P} employer is {V}|{P} new job is at {V}|{S} start{s} at {V} on
Monday|{S} work{s} for {V} these days|{S} accepted an offer from {V}|{S} {have} been working at
{V} since {T}|{S} went to work for {V}|!{S} quit {X}|!{S} left {X} {T}|!{S} {have} retired|
!{S} retired {T}|!{S} got laid off from {X}|!{S} {be} no longer at {X}|!{S} went freelance|
!{S} {be} between jobs now|!{S} resigned from {X}|!{S} handed in {P} notice at {X}"""
    ),
    "role": phrases(
        """{S} {be} a {V} in the same team now|{S} work{s} as {V} at a school|{S} {be} a
{V} these days|{S} {be} the {V} now|{S} got the {V} job|
{S} work{s} as a {V}|{S} {be} a {V}|{S} {be} a {V} at the hospital|{S} got promoted to {V}|
{S} {be} the new {V}|{S} became a {V} {T}|{S} retrained as a {V}|{S} {be} working as a {V} now|
{P} job title is {V}|{P} role is {V} now|{S} {have} been made {V}|{S} stepped up to {V}|
{S} went from {X} to {V}|{S} {be} a {V} now, no longer a {X}|{S} qualified as a {V} {T}|
{S} took the {V} position|{S} moved into a {V} role|!{S} {be} not a {X} anymore|
!{S} stepped down as {X}|!{S} gave up being a {X}|!{S} {be} no longer {X}"""
    ),
    "partner": phrases(
        """{S} {be} married to {V}|{S} married {V} {T}|{S} {be} dating {V}|{S} {be} seeing {V}|
{S} {be} engaged to {V}|{S} got engaged to {V} {T}|{S} and {V} got married|{S} and {V} are
together|{P} partner is {V}|{P} boyfriend is {V}|{P} girlfriend is {V}|{P} husband is {V}|
{P} wife is {V}|{S} {be} in a relationship with {V}|{S} moved in with {V}|{S} {have} been with
{V} for two years|{S} started dating {V} {T}|{S} {be} single|{S} {be} happily single now|
!{S} broke up with {X}|!{S} and {X} split up|!{S} and {X} separated|!{S} divorced {X}|
!{S} and {X} called off the wedding|!{S} {be} no longer with {X}|!{S} {be} divorced now|
!{S} and {X} broke up {T}|!{S} separated from {X}"""
    ),
    "diet": phrases(
        """{S} {be} {V}|{S} went {V} {T}|{S} {be} fully {V} now|{S} {have} been {V} since {T}|
{S} eat{s} {V} these days|{S} switched to a {V} diet|{S} {be} trying {V}|{S} follow{s} a {V}
diet|{S} {be} strictly {V}|{S} went from {X} to {V}|{S} {be} {V}, no more {X}|
!{S} gave up on {X}|!{S} {be} not {X} anymore|!{S} stopped being {X}|!{S} quit {X} {T}"""
    ),
    "allergy": phrases(
        """{S} {be} allergic to {V}|{S} {have} an allergy to {V}|{S} can't eat {V}, allergy|
{S} found out about the {V} allergy|{S} react{s} badly to {V}|{P} allergy to {V} is serious|
{S} {have} a {V} allergy|{S} {be} also allergic to {V}|!{S} {be} not allergic to {X} anymore|
!{S} outgrew {P} {X} allergy|!{S} {be} no longer allergic to {X}|!the {X} allergy is gone"""
    ),
    "team": phrases(
        """{S} {be} on the {V}|{S} support{s} the {V}|{S} joined the {V}|{S} moved to the {V}|
{S} transferred to the {V} {T}|{S} work{s} with the {V} now|{S} {be} part of the {V}|
{S} {have} been on the {V} since {T}|{S} switched from the {X} to the {V}|{S} left the {X}
for the {V}|{P} team is the {V}|{S} now sit{s} with the {V}|{S} got moved over to the {V}|
!{S} left the {X}|!{S} {be} no longer on the {X}"""
    ),
    "manager": phrases(
        """{P} manager is {V}|{S} report{s} to {V}|{S} report{s} to {V} now|{V} is {P} new boss|
{S} now work{s} under {V}|{V} manages {M}|{P} line manager is {V}|{S} got a new manager, {V}|
{P} boss is {V}|{S} {be} managed by {V} since {T}|{X} left so {S} report{s} to {V} now"""
    ),
    "age": phrases(
        """{S} {be} {V}|{S} {be} {V} years old|{S} turned {V} {T}|{S} turn{s} {V} today|
{S} just turned {V}|{S} {be} {V} now|{S} celebrated {P} {V}th birthday|{S} hit {V} {T}|
{V} today for {M}|{S} {be} {V} since Tuesday"""
    ),
    "count": phrases(
        """{S} {have} {V} {A}|{S} {have} {V} {A} now|{S} own{s} {V} {A}|{S} {be} down to {V} {A}|
{S} {have} got {V} {A}|{S} now {have} {V} {A}|{S} keep{s} {V} {A}|there are {V} {A} in {P} house|
{S} {be} up to {V} {A}|{S} adopted another one, so {V} {A} now|{S} {have} {V} {A} in total|
{S} run{s} {V} {A}|{S} speak{s} {V} {A}|{S} added one more, {V} {A} now"""
    ),
    "preference": phrases(
        """{P} favourite {A} is {V}|{V} is {P} favourite {A}|{P} favourite {A} is {V}
now|{V} {have} become {P} favourite {A}|{S} like{s} {V} best as a {A}|{V} is {P} go-to {A}|
{P} new favourite {A} is {V}|{S} {have} gone off {X}, {P} favourite {A} is {V} now|
{P} favourite {A} used to be {X} but now it's {V}|
{S} prefer{s} {V} as the {A}|for the {A}, {S} want{s} {V}|{S} always want{s} the {A}
{V}|{P} {A} is {V} now|{S} switched {P} {A} to {V}|{S} use{s} {V} for the {A}|{S} go{es} for
{V} as the {A}|the {A} for {S} is {V}|{S} changed {P} {A} to {V}|{S} {be} on {V} as the {A}
now|{S} switched from {X} to {V} as the {A}"""
    ),
    "hobby": phrases(
        """{S} like{s} {V} in the morning|{S} love{s} {V} after dinner|{S} enjoy{s} {V} now and
then|{S} like{s} {V} on quiet evenings|{S} {be} a big fan of {V}|{S} like{s} {V} too|
{S} run{s} with {V}|{S} {be} part of {V}|{S} {have} been doing {V} for years|
{S} play{s} {V}|{S} play{s} {V} every weekend|{S} love{s} {V}|{S} {be} really into {V}|
{S} do{es} {V} twice a week|{S} took up {V} {T}|{S} enjoy{s} {V}|{S} like{s} {V}|
{S} {be} learning {V}|{S} started {V} {T}|{S} {be} obsessed with {V}|{S} go{es} {V} on Sundays|
!{S} {do} not play {X} anymore|!{S} stopped {X}|!{S} gave up {X}|!{S} quit {X} {T}|
!{S} {be} done with {X}|!{S} {do}n't do {X} any more|!{S} no longer enjoy{s} {X}"""
    ),
    "habit": phrases(
        """{S} {be} a member at {V}|{S} {have} a membership at {V}|{S} {be} signed up
to {V}|{S} pay{s} for {V}|
{S} {be} a member of {V}|{S} signed up for {V}|{S} still {have} {V}|{S} keep{s} up
{V}|{S} go{es} to {V} every week|{S} started {V} {T}|!{S} cancelled {X}|!{S} quit {X} {T}|
!{S} {have} given up {X}|!{S} stopped {X} {T}|!{S} {do}n't do {X} anymore|!{S} dropped {X}|
!{S} {be} off {X} for good|!no more {X} for {M}"""
    ),
    "education": phrases(
        """{S} {be} in {V}|{S} started {V} {T}|{S} {be} doing {V}|{S} got into {V}|{S} {be}
studying for {V}|{S} moved up to {V}|{S} {be} in {V} this year|{S} enrolled in {V}|
{S} finished {X} and started {V}|!{S} dropped out of {X}|!{S} graduated from {X}"""
    ),
    "version": phrases(
        """{S} run{s} on {A} {V}|{S} {be} on {A} {V}|{S} use{s} {A} {V}|we upgraded {S} to {A} {V}
{T}|{S} {be} pinned to {A} {V}|{S} moved to {A} {V}|{S} build{s} with {A} {V}|we bumped {S} to
{A} {V}|{S} {be} still stuck on {A} {V}|{S} now require{s} {A} {V}|{S} got upgraded to {A} {V}
{T}|we migrated {S} from {A} {X} to {A} {V}|{S} went from {A} {X} to {A} {V}|
{S} {be} on {A} {V} after the upgrade|{S} target{s} {A} {V}|{S} ship{s} with {A} {V}"""
    ),
    "owner": phrases(
        """{S} is handled by {V} now|{V} write{s} {S}|{V} {be} doing {S} from now on|
{S} is {V}'s job now|{V} look{s} after {S} these days|{V} has {S} this month|{V} run{s} {S}
now that {X} left|{S} went from {X} to {V}|{V} do{es} {S} now|{V} picked up {S}|
{V} own{s} {S}|{S} {be} owned by {V}|{V} {be} responsible for {S}|{V} took over {S}
{T}|{X} handed {S} to {V}|{S} moved from {X} to {V}|{V} {be} on {S} this quarter|{S} is
assigned to {V}|{V} runs {S} now|{V} leads {S}|{V} {be} in charge of {S}|{S} belongs to {V}
now|{V} took over {S} from {X}|{X} passed {S} to {V}|{V} {be} looking after {S}|ownership of
{S} went to {V}|{S} was reassigned to {V}|{V} {be} on call for {S}"""
    ),
    "schedule": phrases(
        """{S} {be} staffed {V}|{S} {be} {V} long|{S} last{s} {V}|{S} take{s} place {V}|
{S} {be} every {V}|
{S} {be} {V}|{S} run{s} {V}|{S} happen{s} {V}|we do {S} {V}|{S} moved to {V}|
{S} {be} now {V}|we moved {S} to {V}|{S} go{es} out {V}|{S} is scheduled {V}|from now on
{S} is {V}|{S} shifted from {X} to {V}|we changed {S} to {V}|{S} {be} {V} instead of {X}"""
    ),
    "limit": phrases(
        """the {A} for {S} is {V}|{S} {have} a {A} of {V}|we raised the {A} of {S} to {V}|we
lowered the {A} for {S} to {V}|{S} {be} capped at {V}|the {A} is {V} now|{P} {A} is {V}|
we bumped the {A} to {V}|{S} get{s} a {A} of {V}|the {A} went from {X} to {V}|finance cut
the {A} to {V}|the {A} on {S} is now {V}|{S} {be} limited to {V}|we set the {A} to {V}"""
    ),
    "host": phrases(
        """{S} run{s} on {V}|{S} {be} hosted on {V}|{S} live{s} on {V}|we moved {S} to {V}
{T}|{S} {be} in {V}|{S} {be} deployed to {V}|{S} sit{s} in {V}|{S} now run{s} in {V}|
we migrated {S} from {X} to {V}|{S} left {X} for {V}|{S} {be} served from {V}|{S} {be}
on {V} now, no more {X}|{S} {have} moved to {V}|!we shut down {S} in {X}|!we closed {X}"""
    ),
    "tool": phrases(
        """{A} go{es} out with {V} now|{A} ship{s} with {V}|{S} {be} built on {V}|
{A} {be} in {V} now|{A} now live{s} in {V}|{S} {be} on {V} now|{V} is what we use for {A}|
we use {V} for {A}|{A} is {V} now|{A} goes through {V}|{S} use{s} {V} for {A}|
we switched {A} to {V}|we replaced {X} with {V} for {A}|{A} moved from {X} to {V}|we ditched
{X}, {A} is {V} now|{S} rel{ies} on {V} for {A}|all {A} runs on {V}|we picked {V} for {A}|
{A} is handled by {V}|!we stopped using {X} for {A}|!we dropped {X}"""
    ),
}

#: sentences that fill no slot: what people and teams also say, including look-alikes
NONE_FRAMES = phrases(
    """{S} visited {C} {T}|{S} spent a week in {C} for a conference|{S} {be} in {C} this week
for work|{S} might move to {C} next year|{S} {be} thinking about moving to {C}|{S} lived in {C}
as a kid|{S} grew up in {C}|{S} flew to {C} for a wedding|{S} {have} a trip to {C} planned|
{S} went to {C} on holiday|{S} met an old friend in {C}|{S} {be} travelling around {C}|
are you still in {C}?|did you ever live in {C}?|how is the weather in {C}?|
{S} had an interview at {K} {T}|{S} might apply to {K}|{S} {have} a friend at {K}|
{S} {be} reading a book about {K}|{S} went to a talk by someone from {K}|
{S} baked bread {T}|{S} watched a great film {T}|{S} went for a long walk|{S} {be} so tired
today|{S} cooked dinner for friends|{S} had a great weekend|{S} cleaned the whole flat|
{S} {be} feeling a bit under the weather|{S} went to the dentist {T}|{S} painted the fence|
{S} {have} a cold|{S} fixed the bike|{S} went to a concert {T}|{S} lost {P} keys again|
happy birthday!|thanks so much!|congrats!|that sounds lovely|good luck with it|see you
tomorrow|sounds fun|oh no, sorry to hear that|what do you think?|how was the trip?|
the build is red again|can someone review my PR?|the tests are flaky on CI|{S} fixed the
login bug|we found a memory leak in {S}|{S} throws a 500 on empty input|the deploy failed
{T}|let's discuss the design tomorrow|{S} needs better error messages|I wrote a test for
{S}|we should add logging to {S}|the dashboard is slow today|who broke the main branch?|
the incident review is on Thursday|{S} had an outage {T}|I'm refactoring {S}|the PR for {S}
is ready|the migration script failed halfway|we need to document {S}|latency on {S} spiked
{T}|{S} timed out for a few users|we rolled back the release|there is a typo in the docs|
the meeting ran long|the coffee machine is broken again|it rained all day|the train was late
{T}|the kids loved the zoo|the neighbours had a party|the cat knocked over a plant|
we watched the match at the pub|{S} told a great story at dinner|{S} recommended a podcast|
{S} {be} learning to cook curry|{S} sent me photos of the beach|we talked about {C} for hours|
{S} asked about {K}|{S} complained about the rent|the landlord fixed the boiler|{S} bought
new running shoes|{S} {be} excited about the holidays|{S} {have} a dentist appointment
on Monday|{S} {be} planning a surprise party|good call|they need you|nice, well done|
that's huge|yes!|no way|ha, classic|fair enough|good riddance|what a week|I'm here if you need
anything|send photos!|enjoy it!|tell me everything!|how's the new setup?|any news?|
did you see the snow?|yes, the trains were a mess|the drummer?|proud of you|congratulations,
well deserved|sorry to hear that|is it helping?|ask me next year|cheaper?|much|noted|
I'll update the runbook|anyone around for a review?|the flaky test is back|ugh, I'll look|
time to clean up the old clusters|expect some angry emails|who's doing nights?|is there
parking?|sadly no|latency okay?|fine so far|any replicas?|not yet|was it worth it?|
that should calm things down|customers keep hitting it|let's tell the team|
{S} sent a long email about the offsite|{S} had lunch with the new hires|{S} gave a talk
at the meetup|the office is freezing today|the wifi is down again|{S} {be} on holiday
next week|{S} brought cake for everyone|{S} {be} off sick today|the printer jammed again"""
)
